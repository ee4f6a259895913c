/* The table of representations. Adding one: write lower/rep_NAME.c and list it here. */
#include "lower/lower.h"
#include "lower/rep.h"

#include <string.h>

static const LRepresentation *const representations[] = {
	&rep_array,
};

const char *const lower_representation_names[] = {
	"array",
	NULL,
};

const LRepresentation *rep_find(const char *name)
{
	for (size_t i = 0; i < COUNT_OF(representations); i++)
		if (strcmp(representations[i]->name, name) == 0)
			return representations[i];
	return NULL;
}
