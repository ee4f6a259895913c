/* What an artifact records of its forest besides the code (rt/artifact.h): its shape, labels, names and category values. */
#include "lower/lowering.h"

#include <string.h>

void lower_describe_module(LModule *m, const HForest *f)
{
	m->num_features = f->num_features;
	m->num_margins = hir_num_margins(f);
	m->num_outputs = hir_num_predictions(f);
	m->transform = f->transform;
	if (f->labels.count) {
		m->num_labels = f->labels.count;
		if (f->labels.strings) {
			m->label_strings = strings_copy(f->labels.strings, f->labels.count);
		} else {
			m->label_ints = xmalloc(f->labels.count * sizeof *m->label_ints);
			memcpy(m->label_ints, f->labels.ints, f->labels.count * sizeof *m->label_ints);
		}
	}
	m->feature_names = strings_copy(f->feature_names, f->num_features);
	m->category_values = category_values_copy(&f->category_values, f->num_features);
}
