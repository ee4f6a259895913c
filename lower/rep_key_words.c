/*
 * The words of a key copy (lower/rep.h): what a split's word becomes where walks read
 * rows' keys, its feature alone or its column of keys less one (RepLayout.nan_columns),
 * and the columns a row's keys have.
 */
#include "lower/rep.h"

bool rep_bare_key_words(const RepLayout *layout)
{
	return !(layout->compares & (layout->compares - 1)) &&
	       (!(layout->missing_rules & (layout->missing_rules - 1)) || layout->nan_reads_zero || layout->nan_columns);
}

void rep_lay_out_columns(const HForest *f, RepLayout *layout)
{
	bool t_below;
	layout->nan_columns = layout->keys && layout->missing_rules == (1u << REP_MISSING_LEFT | 1u << REP_MISSING_RIGHT) &&
	                      !layout->nan_reads_zero && !(layout->compares & 1u << HCMP_IN) && layout->compares &&
	                      rep_key_form(layout, &t_below) && 2ull * f->num_features <= REP_WORD_FEATURE_MASK + 1ull;
	layout->key_columns = layout->nan_columns ? 2 * f->num_features : f->num_features;
	while (layout->key_columns > layout->feature_mask + 1ull)
		layout->feature_mask = layout->feature_mask == 0xffu ? 0xffffu : REP_WORD_FEATURE_MASK;
}

bool rep_reads_less_one(const RepLayout *layout, uint32_t word)
{
	bool t_below;
	return layout->nan_columns && rep_key_form(layout, &t_below) && (word >> REP_WORD_MISSING_SHIFT & 1) != t_below;
}

uint32_t rep_key_word(const RepLayout *layout, uint32_t word)
{
	if (!rep_bare_key_words(layout))
		return word;
	return (word & REP_WORD_FEATURE_MASK) + (rep_reads_less_one(layout, word) ? layout->key_columns / 2 : 0);
}

uint32_t rep_tile_word(const RepLayout *layout, uint32_t word)
{
	return (word & REP_WORD_FEATURE_MASK) * layout->key_lanes | (word & ~REP_WORD_FEATURE_MASK);
}
