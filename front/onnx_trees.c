/*
 * ONNX-ML tree ensembles -> HIR: the trees (front/onnx.c reads the rest of the ensemble).
 *
 * Opsets 1-3 name a node by (tree id, node id), in any numbering. skl2onnx and
 * onnxmltools list the nodes tree after tree, ids 0, 1, ... in order, and the weights
 * tree after tree: then each tree is read, built and its pages of the file let go in
 * turn, with no sort and nothing held for the whole forest. Any other numbering is
 * read whole, and children and weights found by sorted (tree id, node id) keys. Opset
 * 5 indexes nodes and leaves directly, and is read whole.
 *
 * Every tree is renumbered breadth-first from its root, the true branch on the left. A
 * leaf that adds to several outputs makes its tree a leaf-vector tree spanning them.
 */
#include "front/onnx.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CATEGORY (UINT32_C(1) << 20) /* BRANCH_MEMBER sets hold categories below this */
#define MAX_NODES_PER_TREE (UINT32_C(1) << 31)

/* Node modes, in the order of opset 5's codes; LEAF is opsets 1-3's leaf mode. */
enum { MODE_MEMBER = 6, MODE_LEAF = 7 };
#define MODE(name, compare) {name, sizeof name - 1, compare}
static const struct {
	const char *name;
	size_t length;
	HCompare compare;
} modes[] = {
	MODE("BRANCH_LEQ", HCMP_LE), MODE("BRANCH_LT", HCMP_LT), MODE("BRANCH_GTE", HCMP_GE), MODE("BRANCH_GT", HCMP_GT),
	MODE("BRANCH_EQ", HCMP_EQ), MODE("BRANCH_NEQ", HCMP_NE), MODE("BRANCH_MEMBER", HCMP_IN), MODE("LEAF", HCMP_COUNT),
};
#undef MODE

/* Values v must have as many elements as `like` (absent optional ones are skipped). */
static bool same_length(Reader *r, const Values *v, const Values *like)
{
	if (v->present && v->count != like->count)
		return onnx_fail(r, "%s.%s: %zu elements, but %s has %zu", r->op, v->name, v->count, like->name, like->count);
	return true;
}

/* Where item i (of those held) comes from, for messages. */
static const char *item_place(const Reader *r, size_t i, char *buf, size_t size)
{
	if (r->v5 && i < r->num_splits)
		snprintf(buf, size, "nodes_featureids[%zu]", i);
	else if (r->v5)
		snprintf(buf, size, "leaf_weights[%zu]", i - r->num_splits);
	else if (r->tree_ids)
		snprintf(buf, size, "tree %lld node %lld (nodes_nodeids[%zu])", (long long)r->tree_ids[i], (long long)r->node_ids[i], i);
	else
		snprintf(buf, size, "tree %lld node %zu (nodes_nodeids[%zu])", (long long)r->tree_id, i, r->item_first + i);
	return buf;
}

/* Item it, element i of the nodes_* arrays, is a split (its mode set): its feature, threshold and missing rule. */
static bool read_split(Reader *r, Item *it, size_t i, int64_t feature, double threshold, int64_t track, const char *thresholds)
{
	if (feature < 0 || feature > INT32_MAX)
		return onnx_fail(r, "%s.nodes_featureids[%zu]: feature %lld out of range", r->op, i, (long long)feature);
	if (track != 0 && track != 1)
		return onnx_fail(r, "%s.nodes_missing_value_tracks_true[%zu]: %lld (expected 0 or 1)", r->op, i, (long long)track);
	it->feature = (int32_t)feature;
	it->missing_true = (uint8_t)track;
	it->threshold = threshold;
	if (it->mode != MODE_MEMBER && isnan(it->threshold))
		return onnx_fail(r, "%s.%s[%zu]: threshold is NaN", r->op, thresholds, i);
	if (feature > r->max_feature)
		r->max_feature = feature;
	return true;
}

/* Room for n items (zeroed) and their scratch. */
static void reserve_items(Reader *r, size_t n)
{
	GROW(r->items, n ? n : 1, r->items_cap);
	GROW(r->stamp, n ? n : 1, r->stamp_cap);
	GROW(r->referenced, n ? n : 1, r->referenced_cap);
	memset(r->items, 0, n * sizeof *r->items);
	memset(r->stamp, 0, n * sizeof *r->stamp);
	memset(r->referenced, 0, n);
	r->num_items = n;
}

/* Opsets 1-3: the nodes_* attributes, read in step. */
typedef struct NodeValues {
	Values tree_ids, node_ids, features, thresholds, true_ids, false_ids, missing;
	PbRepeated modes;
	const uint8_t *modes_kept; /* see onnx_release */
} NodeValues;

/* Opsets 1-3: the leaves' weights (prefix "target_" or "class_"), read in step. */
typedef struct WeightValues {
	Values tree_ids, node_ids, ids, values;
} WeightValues;

/* Opsets 1-3: the nodes_* attributes into *n, checked to be of one length. */
static bool read_node_values(Reader *r, NodeValues *n, bool *thresholds_double)
{
	const Attribute *modes_attribute = onnx_attribute(r, "nodes_modes");
	size_t num_modes;
	if (!onnx_read_values(r, "nodes_treeids", false, true, &n->tree_ids, NULL) ||
	    !onnx_read_values(r, "nodes_nodeids", false, true, &n->node_ids, NULL) ||
	    !onnx_read_values(r, "nodes_featureids", false, true, &n->features, NULL) ||
	    !onnx_read_values(r, "nodes_values", true, true, &n->thresholds, thresholds_double) ||
	    !onnx_read_values(r, "nodes_truenodeids", false, true, &n->true_ids, NULL) ||
	    !onnx_read_values(r, "nodes_falsenodeids", false, true, &n->false_ids, NULL) ||
	    !onnx_read_values(r, "nodes_missing_value_tracks_true", false, false, &n->missing, NULL))
		return false;
	if (!modes_attribute)
		return onnx_fail(r, "%s: missing attribute 'nodes_modes'", r->op);
	if (!same_length(r, &n->node_ids, &n->tree_ids) || !same_length(r, &n->features, &n->tree_ids) ||
	    !same_length(r, &n->thresholds, &n->tree_ids) || !same_length(r, &n->true_ids, &n->tree_ids) ||
	    !same_length(r, &n->false_ids, &n->tree_ids) || !same_length(r, &n->missing, &n->tree_ids) ||
	    !onnx_read_strings(r, modes_attribute, &n->modes, &num_modes))
		return false;
	n->modes_kept = n->modes.message.p;
	if (num_modes != n->tree_ids.count)
		return onnx_fail(r, "%s.nodes_modes: %zu elements, but nodes_treeids has %zu", r->op, num_modes, n->tree_ids.count);
	if (n->tree_ids.count >= UINT32_MAX)
		return onnx_fail(r, "%s: %zu nodes (grove reads up to %u)", r->op, n->tree_ids.count, UINT32_MAX - 1);
	return true;
}

/* Opsets 1-3: the weights' attributes (prefix "target_" or "class_") into *w, checked to be of one length. */
static bool read_weight_values(Reader *r, const char *prefix, WeightValues *w, bool *is_double)
{
	char names[4][32];
	snprintf(names[0], sizeof names[0], "%streeids", prefix);
	snprintf(names[1], sizeof names[1], "%snodeids", prefix);
	snprintf(names[2], sizeof names[2], "%sids", prefix);
	snprintf(names[3], sizeof names[3], "%sweights", prefix);
	if (!onnx_read_values(r, names[0], false, true, &w->tree_ids, NULL) ||
	    !onnx_read_values(r, names[1], false, true, &w->node_ids, NULL) ||
	    !onnx_read_values(r, names[2], false, true, &w->ids, NULL) ||
	    !onnx_read_values(r, names[3], true, true, &w->values, is_double) || !same_length(r, &w->node_ids, &w->tree_ids) ||
	    !same_length(r, &w->ids, &w->tree_ids) || !same_length(r, &w->values, &w->tree_ids))
		return false;
	if (w->tree_ids.count >= UINT32_MAX)
		return onnx_fail(r, "%s: %zu weights (grove reads up to %u)", r->op, w->tree_ids.count, UINT32_MAX - 1);
	return true;
}

/* Opsets 1-3: element i of the nodes_* arrays into item it, from its mode s and values. */
static bool set_item_v3(Reader *r, const NodeValues *n, Item *it, size_t i, PbBytes s, int64_t feature, double threshold, int64_t track)
{
	it->mode = COUNT_OF(modes);
	for (uint8_t m = 0; m < COUNT_OF(modes) && it->mode == COUNT_OF(modes); m++)
		if (m != MODE_MEMBER && s.len == modes[m].length && s.data[s.len - 1] == modes[m].name[s.len - 1] &&
		    memcmp(s.data, modes[m].name, s.len) == 0)
			it->mode = m;
	if (it->mode == COUNT_OF(modes))
		return onnx_fail(r, "%s.nodes_modes[%zu]: unknown mode '%.*s'", r->op, i, (int)(s.len < 40 ? s.len : 40), (const char *)s.data);
	return it->mode == MODE_LEAF || read_split(r, it, i, feature, threshold, track, n->thresholds.name);
}

/*
 * Opsets 1-3: element i of the nodes_* arrays into item it; *tree, *id its ids, and for
 * a split *ids the node ids of its children.
 */
static bool read_item_v3(Reader *r, NodeValues *n, Item *it, size_t i, int64_t *tree, int64_t *id, int64_t ids[2])
{
	PbBytes s = pb_repeated_next_bytes(&n->modes);
	int64_t feature = onnx_values_next_int(&n->features), track = n->missing.present ? onnx_values_next_int(&n->missing) : 0;
	double threshold = onnx_values_next(&n->thresholds);
	*tree = onnx_values_next_int(&n->tree_ids);
	*id = onnx_values_next_int(&n->node_ids);
	ids[0] = onnx_values_next_int(&n->true_ids);
	ids[1] = onnx_values_next_int(&n->false_ids);
	return set_item_v3(r, n, it, i, s, feature, threshold, track);
}

/* Opsets 1-3: weight j into r->weights[r->num_weights++], adding to leaf u (SIZE_MAX: no node (tree, id)). */
static bool read_weight_v3(Reader *r, const WeightValues *w, size_t j, int64_t tree, int64_t id, size_t u, int64_t target,
                           double value, uint32_t num_outputs)
{
	if (u == SIZE_MAX)
		return onnx_fail(r, "%s.%s[%zu]: tree %lld has no node %lld", r->op, w->node_ids.name, j, (long long)tree, (long long)id);
	if (r->items[u].mode != MODE_LEAF)
		return onnx_fail(r, "%s.%s[%zu]: node %lld of tree %lld is not a leaf", r->op, w->node_ids.name, j, (long long)id,
		                 (long long)tree);
	if (target < 0 || target >= num_outputs)
		return onnx_fail(r, "%s.%s[%zu]: %lld out of range (the model has %u outputs)", r->op, w->ids.name, j, (long long)target,
		                 num_outputs);
	if (!isfinite(value))
		return onnx_fail(r, "%s.%s[%zu]: weight is %s", r->op, w->values.name, j, isnan(value) ? "NaN" : "infinite");
	GROW(r->weights, r->num_weights + 1, r->weights_cap);
	GROW(r->weight_items, r->num_weights + 1, r->weight_items_cap);
	r->weights[r->num_weights] = (Weight){(uint32_t)target, value};
	r->weight_items[r->num_weights++] = (uint32_t)u;
	r->items[u].num_weights++;
	r->class1 |= target == 1;
	r->negative |= value < 0;
	return true;
}

/* Opsets 1-3: group the weights read by leaf, keeping their order within a leaf (a counting sort). */
static void group_weights(Reader *r)
{
	size_t next = 0;
	bool sorted = true;
	Weight *grouped;
	for (size_t j = 1; j < r->num_weights && sorted; j++)
		sorted = r->weight_items[j - 1] <= r->weight_items[j];
	for (size_t u = 0; u < r->num_items; u++) {
		if (r->items[u].mode != MODE_LEAF)
			continue;
		r->items[u].first_weight = (uint32_t)next;
		next += r->items[u].num_weights;
		if (!sorted)
			r->items[u].num_weights = 0; /* counted again as they are placed */
	}
	if (sorted)
		return;
	grouped = xmalloc((r->num_weights ? r->num_weights : 1) * sizeof *grouped);
	for (size_t j = 0; j < r->num_weights; j++) {
		Item *leaf = &r->items[r->weight_items[j]];
		grouped[leaf->first_weight + leaf->num_weights++] = r->weights[j];
	}
	free(r->weights);
	r->weights = grouped;
	r->weights_cap = r->num_weights ? r->num_weights : 1;
}

/* Opsets 1-3: the node id of held item u. */
static int64_t node_id(const Reader *r, size_t u) { return r->node_ids ? r->node_ids[u] : (int64_t)u; }

/*
 * Opsets 1-3: the one item of tree `tree`, items members[first .. end) (or first .. end
 * when members is NULL), that no split points to: its root; SIZE_MAX after an error.
 */
static size_t find_root(Reader *r, const size_t *members, size_t first, size_t end, int64_t tree)
{
	size_t root = SIZE_MAX;
	for (size_t k = first; k < end; k++) {
		size_t u = members ? members[k] : k;
		if (r->referenced[u])
			continue;
		if (root != SIZE_MAX) {
			onnx_fail(r, "%s: tree %lld has two roots, nodes %lld and %lld (nodes no other node points to)", r->op, (long long)tree,
			          (long long)node_id(r, root), (long long)node_id(r, u));
			return SIZE_MAX;
		}
		root = u;
	}
	if (root == SIZE_MAX)
		onnx_fail(r, "%s: tree %lld has no root (every node is another's child: a cycle)", r->op, (long long)tree);
	return root;
}

static bool build_tree(Reader *r, HForest *f, size_t root, uint32_t t, uint32_t watch, bool *touches);

/* Opsets 1-3: a tree's id and its number of nodes, which nodes_* give in a row with ids 0, 1, ... */
typedef struct TreeRun {
	int64_t tree;
	size_t count;
} TreeRun;

/*
 * Opsets 1-3: whether nodes_* hold each tree in a row, trees in increasing order of their
 * ids, nodes numbered 0, 1, ... in a row, and the weights come tree after tree (what
 * skl2onnx and onnxmltools write): then the trees are read one at a time (*runs, *num_runs),
 * and nodes_treeids and nodes_nodeids are read through (their runs say all they hold).
 */
static bool trees_in_order(NodeValues *n, const WeightValues *w, TreeRun **runs, size_t *num_runs)
{
	Values trees = n->tree_ids, ids = n->node_ids, weight_trees = w->tree_ids; /* (read_node_values: as many ids as trees) */
	int64_t tree[256], id[256], last = INT64_MIN; /* (a chunk of each at a time: pb_repeated_take's tight loops) */
	size_t cap = 0, first = 0, m;
	*runs = NULL;
	*num_runs = 0;
	for (size_t i = 0; i < trees.count;) {
		m = trees.count - i < COUNT_OF(tree) ? trees.count - i : COUNT_OF(tree);
		onnx_values_take_ints(&trees, m, tree);
		onnx_values_take_ints(&ids, m, id);
		for (size_t k = 0; k < m; k++, i++) {
			if (*num_runs && tree[k] == (*runs)[*num_runs - 1].tree && id[k] == (int64_t)(i - first)) {
				(*runs)[*num_runs - 1].count++;
			} else if ((!*num_runs || tree[k] > (*runs)[*num_runs - 1].tree) && id[k] == 0) {
				GROW(*runs, *num_runs + 1, cap);
				(*runs)[(*num_runs)++] = (TreeRun){tree[k], 1};
				first = i;
			} else {
				return false;
			}
		}
	}
	for (size_t j = 0; j < weight_trees.count; j += m) {
		m = weight_trees.count - j < COUNT_OF(tree) ? weight_trees.count - j : COUNT_OF(tree);
		onnx_values_take_ints(&weight_trees, m, tree);
		for (size_t k = 0; k < m; last = tree[k++])
			if (tree[k] < last)
				return false;
	}
	n->tree_ids = trees;
	n->node_ids = ids;
	return true;
}

/* Let the kernel drop the file's pages behind the nodes_* and weights' positions. */
static void release_values(const Reader *r, NodeValues *n, WeightValues *w)
{
	Values *all[] = {&n->tree_ids, &n->node_ids, &n->features, &n->thresholds, &n->true_ids, &n->false_ids, &n->missing,
	                 &w->tree_ids, &w->node_ids, &w->ids, &w->values};
	for (size_t k = 0; k < COUNT_OF(all); k++)
		onnx_values_release(r, all[k]);
	onnx_release(r, &n->modes_kept, n->modes.message.p);
}

/* Weights read a chunk at a time (pb_repeated_take's tight loops), each attribute's run in turn. */
typedef struct WeightChunk {
	int64_t tree[256], id[256], target[256];
	double value[256];
	size_t at, end;
} WeightChunk;

/* Weight j (of w's, which has it) from c, refilled where it is spent. */
static void next_weight(WeightValues *w, WeightChunk *c, size_t j, int64_t *tree, int64_t *id, int64_t *target, double *value)
{
	if (c->at == c->end) {
		c->end = w->tree_ids.count - j < COUNT_OF(c->tree) ? w->tree_ids.count - j : COUNT_OF(c->tree);
		c->at = 0;
		onnx_values_take_ints(&w->tree_ids, c->end, c->tree); /* (read_weight_values: the four of as many elements) */
		onnx_values_take_ints(&w->node_ids, c->end, c->id);
		onnx_values_take_ints(&w->ids, c->end, c->target);
		onnx_values_take(&w->values, c->end, c->value);
	}
	*tree = c->tree[c->at], *id = c->id[c->at], *target = c->target[c->at], *value = c->value[c->at];
	c->at++;
}

/* Opsets 1-3, trees in order (trees_in_order): each tree read and built in turn. */
static bool read_trees_in_order(Reader *r, HForest *f, NodeValues *n, WeightValues *w, const TreeRun *runs, size_t num_runs,
                                uint32_t num_outputs, uint32_t watch, bool *all_rows_touch)
{
	size_t j = 0;
	int64_t wtree = 0, wid = 0, target = 0;
	double value = 0;
	WeightChunk chunk = {.at = 0, .end = 0};
	char place[128];
	bool pending = false; /* weight j is read, not yet placed */
	*all_rows_touch = false;
	for (size_t k = 0; k < num_runs; k++) {
		size_t count = runs[k].count, root;
		int64_t *features, *tracks, *true_ids, *false_ids;
		bool touches;
		reserve_items(r, count);
		r->tree_id = runs[k].tree;
		r->num_weights = 0;
		/* The tree's values, attribute after attribute (its ids are as trees_in_order found them, and read). */
		GROW(r->ints, 4 * count, r->ints_cap);
		GROW(r->doubles, count, r->doubles_cap);
		features = r->ints;
		tracks = features + count;
		true_ids = tracks + count;
		false_ids = true_ids + count;
		onnx_values_take_ints(&n->features, count, features);
		if (n->missing.present)
			onnx_values_take_ints(&n->missing, count, tracks);
		else
			memset(tracks, 0, count * sizeof *tracks);
		onnx_values_take(&n->thresholds, count, r->doubles);
		onnx_values_take_ints(&n->true_ids, count, true_ids);
		onnx_values_take_ints(&n->false_ids, count, false_ids);
		for (size_t u = 0; u < count; u++) {
			int64_t ids[2] = {true_ids[u], false_ids[u]};
			Item *it = &r->items[u];
			if (!set_item_v3(r, n, it, r->item_first + u, pb_repeated_next_bytes(&n->modes), features[u], r->doubles[u], tracks[u]))
				return false;
			if (it->mode == MODE_LEAF)
				continue;
			for (int side = 0; side < 2; side++) {
				if (ids[side] < 0 || (uint64_t)ids[side] >= count)
					return onnx_fail(r, "%s.%s[%zu]: node id %lld is not in tree %lld", r->op,
					                 side ? n->false_ids.name : n->true_ids.name, r->item_first + u, (long long)ids[side],
					                 (long long)r->tree_id);
				it->child[side] = (uint32_t)ids[side];
				r->referenced[ids[side]] = 1;
			}
		}
		if ((root = find_root(r, NULL, 0, count, r->tree_id)) == SIZE_MAX)
			return false;
		for (;; j++, pending = false) {
			if (!pending && j < w->tree_ids.count) {
				next_weight(w, &chunk, j, &wtree, &wid, &target, &value);
				pending = true;
			}
			if (!pending || wtree > r->tree_id)
				break;
			if (!read_weight_v3(r, w, j, wtree, wid, wtree == r->tree_id && wid >= 0 && (uint64_t)wid < count ? (size_t)wid : SIZE_MAX,
			                    target, value, num_outputs))
				return false;
		}
		group_weights(r);
		if (!build_tree(r, f, root, (uint32_t)k, watch, &touches))
			return false;
		for (size_t u = 0; u < count; u++)
			if (!r->stamp[u])
				return onnx_fail(r, "%s: %s is not reachable from any tree's root", r->op, item_place(r, u, place, sizeof place));
		*all_rows_touch |= touches;
		r->item_first += count;
		release_values(r, n, w);
	}
	if (pending)
		return read_weight_v3(r, w, j, wtree, wid, SIZE_MAX, target, value, num_outputs);
	r->num_trees = (uint32_t)num_runs;
	return true;
}

/* A (tree id, node id) key of opsets 1-3, and the item it names. */
typedef struct Key {
	int64_t tree, id;
	size_t item;
} Key;

static int key_compare(const void *a, const void *b)
{
	const Key *x = a, *y = b;
	if (x->tree != y->tree)
		return x->tree < y->tree ? -1 : 1;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->item < y->item ? -1 : x->item > y->item;
}

/* The item named (tree, id), or SIZE_MAX. */
static size_t key_find(const Key *keys, size_t n, int64_t tree, int64_t id)
{
	Key want = {tree, id, 0};
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (key_compare(&keys[mid], &want) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && keys[lo].tree == tree && keys[lo].id == id ? keys[lo].item : SIZE_MAX;
}

/*
 * Opsets 1-3, any numbering: all nodes at once, found by their sorted (tree id, node id)
 * keys; each tree's root; the weights.
 */
static bool read_items_v3(Reader *r, NodeValues *n, WeightValues *w, uint32_t num_outputs)
{
	Key *keys;
	size_t *members;
	bool ok = false;
	reserve_items(r, n->tree_ids.count);
	r->tree_ids = xmalloc((r->num_items ? r->num_items : 1) * sizeof *r->tree_ids);
	r->node_ids = xmalloc((r->num_items ? r->num_items : 1) * sizeof *r->node_ids);
	keys = xcalloc(r->num_items ? r->num_items : 1, sizeof *keys);
	members = xcalloc(r->num_items ? r->num_items : 1, sizeof *members);
	{
		int64_t (*ids)[2] = xmalloc((r->num_items ? r->num_items : 1) * sizeof *ids);
		for (size_t i = 0; i < r->num_items; i++) {
			if (!read_item_v3(r, n, &r->items[i], i, &r->tree_ids[i], &r->node_ids[i], ids[i]))
				goto done_ids;
			keys[i] = (Key){r->tree_ids[i], r->node_ids[i], i};
		}
		qsort(keys, r->num_items, sizeof *keys, key_compare);
		for (size_t k = 1; k < r->num_items; k++)
			if (keys[k].tree == keys[k - 1].tree && keys[k].id == keys[k - 1].id) {
				onnx_fail(r, "%s.nodes_nodeids[%zu]: tree %lld has node %lld twice (also at %zu)", r->op, keys[k].item,
				          (long long)keys[k].tree, (long long)keys[k].id, keys[k - 1].item);
				goto done_ids;
			}
		for (size_t i = 0; i < r->num_items; i++) {
			if (r->items[i].mode == MODE_LEAF)
				continue;
			for (int side = 0; side < 2; side++) {
				size_t u = key_find(keys, r->num_items, r->tree_ids[i], ids[i][side]);
				if (u == SIZE_MAX) {
					onnx_fail(r, "%s.%s[%zu]: node id %lld is not in tree %lld", r->op, side ? n->false_ids.name : n->true_ids.name, i,
					          (long long)ids[i][side], (long long)r->tree_ids[i]);
					goto done_ids;
				}
				r->items[i].child[side] = (uint32_t)u;
				r->referenced[u] = 1;
			}
		}
		ok = true;
done_ids:
		free(ids);
	}
	if (!ok)
		goto done;
	ok = false;
	/* Trees in order of their ids. */
	r->roots = xcalloc(r->num_items ? r->num_items : 1, sizeof *r->roots);
	for (size_t k = 0; k < r->num_items;) {
		size_t end = k, root;
		while (end < r->num_items && keys[end].tree == keys[k].tree)
			end++;
		for (size_t m = k; m < end; m++)
			members[m] = keys[m].item;
		if ((root = find_root(r, members, k, end, keys[k].tree)) == SIZE_MAX)
			goto done;
		r->roots[r->num_trees++] = root;
		k = end;
	}
	for (size_t j = 0; j < w->tree_ids.count; j++) {
		int64_t tree = onnx_values_next_int(&w->tree_ids), id = onnx_values_next_int(&w->node_ids);
		int64_t target = onnx_values_next_int(&w->ids);
		double value = onnx_values_next(&w->values);
		if (!read_weight_v3(r, w, j, tree, id, key_find(keys, r->num_items, tree, id), target, value, num_outputs))
			goto done;
	}
	group_weights(r);
	ok = true;
done:
	free(keys);
	free(members);
	return ok;
}

/* Opset 5: element i of a child array, an index into nodes_* or (when `leaf` says so) leaf_*. */
static bool child_v5(Reader *r, Values *ids, Values *leafs, size_t i, int side)
{
	int64_t id = onnx_values_next_int(ids), is_leaf = onnx_values_next_int(leafs);
	size_t limit = is_leaf ? r->num_items - r->num_splits : r->num_splits;
	if (is_leaf != 0 && is_leaf != 1)
		return onnx_fail(r, "%s.%s[%zu]: %lld (expected 0 or 1)", r->op, leafs->name, i, (long long)is_leaf);
	if (id < 0 || (uint64_t)id >= limit)
		return onnx_fail(r, "%s.%s[%zu]: index %lld out of range (there are %zu %s)", r->op, ids->name, i, (long long)id, limit,
		            is_leaf ? "leaves" : "nodes");
	r->items[i].child[side] = (uint32_t)((size_t)id + (is_leaf ? r->num_splits : 0));
	return true;
}

/* Opset 5: the BRANCH_MEMBER sets, in node order, NaN between them; category rule EXACT. */
static bool read_sets_v5(Reader *r, HForest *f, size_t file_size)
{
	Values members;
	size_t k = 0;
	uint64_t budget = 16 * (uint64_t)file_size + 65536; /* words of sets the file may ask for */
	if (!onnx_read_values(r, "membership_values", false, false, &members, NULL))
		return false;
	f->category_rule = HCATEGORY_EXACT;
	for (size_t i = 0; i < r->num_splits; i++) {
		Values set = members; /* where this set starts, read again to fill it */
		size_t start = k;
		double largest = -1, c = 0;
		uint32_t *words;
		if (r->items[i].mode != MODE_MEMBER)
			continue;
		if (k > members.count || (k == members.count && (k > 0 || !members.present)))
			return onnx_fail(r, "%s.membership_values: no set for the BRANCH_MEMBER node nodes_modes[%zu]", r->op, i);
		for (; k < members.count && !isnan(c = onnx_values_next(&members)); k++) {
			if (c < 0 || c != floor(c) || c >= MAX_CATEGORY)
				return onnx_fail(r, "%s.membership_values[%zu]: %g is not a category grove takes (an integer from 0 to %u)", r->op,
				            k, c, MAX_CATEGORY - 1);
			largest = c > largest ? c : largest;
		}
		{
			uint32_t num_words = largest < 0 ? 0 : (uint32_t)largest / 32 + 1;
			if (num_words > budget)
				return onnx_fail(r, "%s.membership_values: the sets need more memory than a file of this size justifies", r->op);
			budget -= num_words;
			r->items[i].set = hir_set_add(f, num_words, &words);
		}
		for (size_t j = start; j < k; j++) {
			uint32_t category = (uint32_t)onnx_values_next(&set);
			words[category / 32] |= UINT32_C(1) << (category % 32);
		}
		k++; /* the NaN */
	}
	if (k < members.count)
		return onnx_fail(r, "%s.membership_values[%zu]: more sets than BRANCH_MEMBER nodes", r->op, k);
	return true;
}

/* Opset 5: the interior nodes, the leaves (one weight each) and the roots. */
static bool read_items_v5(Reader *r, uint32_t num_outputs, HForest *f, size_t file_size, bool *thresholds_double, bool *weights_double)
{
	Values roots, features, modes_v, thresholds, true_ids, false_ids, true_leafs, false_leafs, missing, targets, weights;
	if (!onnx_read_values(r, "tree_roots", false, true, &roots, NULL) ||
	    !onnx_read_values(r, "nodes_featureids", false, true, &features, NULL) ||
	    !onnx_read_values(r, "nodes_modes", false, true, &modes_v, NULL) ||
	    !onnx_read_values(r, "nodes_splits", false, true, &thresholds, thresholds_double) ||
	    !onnx_read_values(r, "nodes_truenodeids", false, true, &true_ids, NULL) ||
	    !onnx_read_values(r, "nodes_falsenodeids", false, true, &false_ids, NULL) ||
	    !onnx_read_values(r, "nodes_trueleafs", false, true, &true_leafs, NULL) ||
	    !onnx_read_values(r, "nodes_falseleafs", false, true, &false_leafs, NULL) ||
	    !onnx_read_values(r, "nodes_missing_value_tracks_true", false, false, &missing, NULL) ||
	    !onnx_read_values(r, "leaf_targetids", false, true, &targets, NULL) ||
	    !onnx_read_values(r, "leaf_weights", false, true, &weights, weights_double))
		return false;
	if (!same_length(r, &modes_v, &features) || !same_length(r, &thresholds, &features) || !same_length(r, &true_ids, &features) ||
	    !same_length(r, &false_ids, &features) || !same_length(r, &true_leafs, &features) ||
	    !same_length(r, &false_leafs, &features) || !same_length(r, &missing, &features) || !same_length(r, &weights, &targets))
		return false;
	if (features.count + targets.count >= UINT32_MAX)
		return onnx_fail(r, "%s: %zu nodes and leaves (grove reads up to %u)", r->op, features.count + targets.count, UINT32_MAX - 1);
	reserve_items(r, features.count + targets.count);
	r->num_splits = features.count;
	r->num_weights = targets.count;
	r->weights = xcalloc(r->num_weights ? r->num_weights : 1, sizeof *r->weights);
	for (size_t i = 0; i < r->num_splits; i++) {
		int64_t mode = onnx_values_next_int(&modes_v), feature = onnx_values_next_int(&features);
		int64_t track = missing.present ? onnx_values_next_int(&missing) : 0;
		double threshold = onnx_values_next(&thresholds);
		if (mode < 0 || mode > MODE_MEMBER)
			return onnx_fail(r, "%s.nodes_modes[%zu]: unknown mode %lld", r->op, i, (long long)mode);
		r->items[i].mode = (uint8_t)mode;
		if (!read_split(r, &r->items[i], i, feature, threshold, track, thresholds.name) ||
		    !child_v5(r, &true_ids, &true_leafs, i, 0) || !child_v5(r, &false_ids, &false_leafs, i, 1))
			return false;
	}
	for (size_t j = 0; j < r->num_weights; j++) {
		Item *leaf = &r->items[r->num_splits + j];
		int64_t target = onnx_values_next_int(&targets);
		double w = onnx_values_next(&weights);
		if (target < 0 || target >= num_outputs)
			return onnx_fail(r, "%s.leaf_targetids[%zu]: %lld out of range (the model has %u outputs)", r->op, j, (long long)target,
			            num_outputs);
		if (!isfinite(w))
			return onnx_fail(r, "%s.leaf_weights[%zu]: weight is %s", r->op, j, isnan(w) ? "NaN" : "infinite");
		leaf->mode = MODE_LEAF;
		leaf->first_weight = (uint32_t)j;
		leaf->num_weights = 1;
		r->weights[j] = (Weight){(uint32_t)target, w};
		r->class1 |= target == 1;
		r->negative |= w < 0;
	}
	r->roots = xcalloc(roots.count ? roots.count : 1, sizeof *r->roots);
	for (size_t t = 0; t < roots.count; t++) {
		int64_t root = onnx_values_next_int(&roots);
		if (root < 0 || (uint64_t)root >= r->num_splits)
			return onnx_fail(r, "%s.tree_roots[%zu]: index %lld out of range (there are %zu nodes)", r->op, t, (long long)root,
			            r->num_splits);
		r->roots[r->num_trees++] = (size_t)root;
	}
	return read_sets_v5(r, f, file_size);
}

/* Whether item u acts as a leaf: a leaf, or (opset 5) a node whose branches are the same leaf. */
static size_t as_leaf(const Reader *r, size_t u)
{
	const Item *it = &r->items[u];
	if (it->mode == MODE_LEAF)
		return u;
	if (r->v5 && it->child[0] == it->child[1] && r->items[it->child[0]].mode == MODE_LEAF)
		return it->child[0];
	return SIZE_MAX;
}

/* Combine weight w into a leaf's value v for output aggregate a. */
static double combine(HAggregate a, double v, double w)
{
	if (a == HAGGREGATE_MIN)
		return w < v ? w : v;
	if (a == HAGGREGATE_MAX)
		return w > v ? w : v;
	return v + w;
}

/*
 * Tree t of the model into f: its items breadth first from the root (a leaf may be
 * reached more than once; any other node twice is a cycle or a shared subtree), then
 * its leaves' values over the outputs they add to. *touches says whether every leaf
 * adds to output `watch`.
 */
static bool build_tree(Reader *r, HForest *f, size_t root, uint32_t t, uint32_t watch, bool *touches)
{
	size_t count = 1;
	uint32_t lo = UINT32_MAX, hi = 0, width;
	double identity = f->aggregate == HAGGREGATE_MIN ? INFINITY : f->aggregate == HAGGREGATE_MAX ? -INFINITY : 0;
	HNode *nodes;
	char place[128];

	*touches = true;
	GROW(r->order, 1, r->order_cap);
	r->order[0] = (uint32_t)root;
	for (size_t i = 0; i < count; i++) {
		size_t u = r->order[i], leaf = as_leaf(r, u);
		const Item *it = &r->items[u];
		HNode *n;
		if (leaf != u && r->stamp[u])
			return onnx_fail(r, "%s: %s is reached twice (a cycle, or a node shared by two parents)", r->op,
			            item_place(r, u, place, sizeof place));
		r->stamp[u] = t + 1;
		GROW(r->nodes, count, r->nodes_cap);
		n = memset(&r->nodes[i], 0, sizeof *n);
		if (leaf != SIZE_MAX) {
			const Item *l = &r->items[leaf];
			bool seen = false;
			r->stamp[leaf] = t + 1;
			if (!l->num_weights)
				return onnx_fail(r, "%s: %s is a leaf without a weight", r->op, item_place(r, leaf, place, sizeof place));
			for (uint32_t k = 0; k < l->num_weights; k++) {
				uint32_t target = r->weights[l->first_weight + k].target;
				lo = target < lo ? target : lo;
				hi = target > hi ? target : hi;
				seen |= target == watch;
			}
			*touches &= seen;
			n->feature = HIR_LEAF;
			n->left = l->first_weight; /* till the values are added below */
			n->right = l->num_weights;
			continue;
		}
		if (count + 2 >= MAX_NODES_PER_TREE)
			return onnx_fail(r, "%s: tree %u has more than %u nodes", r->op, t, MAX_NODES_PER_TREE);
		n->feature = it->feature;
		n->value = it->threshold;
		n->compare = (uint8_t)modes[it->mode].compare;
		n->missing = HMISSING_NAN;
		n->default_left = it->missing_true;
		n->left = (uint32_t)count;
		n->right = (uint32_t)count + 1;
		if (it->mode == MODE_MEMBER)
			n->set = it->set;
		GROW(r->order, count + 2, r->order_cap);
		r->order[count++] = it->child[0];
		r->order[count++] = it->child[1];
		/* (breadth first over items in the file's order, depth first: each a cache miss in a large tree) */
		__builtin_prefetch(&r->items[it->child[0]]);
		__builtin_prefetch(&r->items[it->child[1]]);
	}

	width = hi - lo + 1;
	nodes = hir_tree_add(f, (uint32_t)count, lo);
	f->trees[f->num_trees - 1].width = width;
	memcpy(nodes, r->nodes, count * sizeof *nodes);
	for (size_t i = 0; i < count; i++) {
		uint32_t first = nodes[i].left, num_weights = nodes[i].right;
		double *values = &nodes[i].value;
		if (nodes[i].feature != HIR_LEAF)
			continue;
		nodes[i].left = nodes[i].right = 0;
		if (width > 1) {
			nodes[i].vector = (uint32_t)hir_leaf_values_add(f, width, &values);
			if (f->num_leaf_values > UINT32_MAX)
				return onnx_fail(r, "%s: more than %u leaf values", r->op, UINT32_MAX);
		}
		for (uint32_t k = 0; k < width; k++)
			values[k] = identity;
		for (uint32_t k = 0; k < num_weights; k++) {
			const Weight *w = &r->weights[first + k];
			values[w->target - lo] = combine(f->aggregate, values[w->target - lo], w->value);
		}
	}
	return true;
}

/*
 * All trees (roots in r->roots); then every item must belong to one. With two classes, a row whose leaves
 * add nothing to class 1 makes onnxruntime answer in its binary encoding, which HIR
 * cannot say: some tree must add to class 1 from every leaf (*all_rows_touch).
 */
static bool build_trees(Reader *r, HForest *f, uint32_t watch, bool *all_rows_touch)
{
	char place[128];
	*all_rows_touch = false;
	for (uint32_t t = 0; t < r->num_trees; t++) {
		bool touches;
		if (!build_tree(r, f, r->roots[t], t, watch, &touches))
			return false;
		*all_rows_touch |= touches;
	}
	for (size_t u = 0; u < r->num_items; u++)
		if (!r->stamp[u])
			return onnx_fail(r, "%s: %s is not reachable from any tree's root", r->op, item_place(r, u, place, sizeof place));
	return true;
}

bool onnx_read_trees(Reader *r, HForest *f, uint32_t num_outputs, uint32_t watch, size_t file_size, bool *all_rows_touch,
                     bool *thresholds_double, bool *weights_double)
{
	NodeValues n;
	WeightValues w;
	TreeRun *runs;
	size_t num_runs;
	bool ok;
	if (r->v5)
		return read_items_v5(r, num_outputs, f, file_size, thresholds_double, weights_double) &&
		       build_trees(r, f, watch, all_rows_touch);
	if (!read_node_values(r, &n, thresholds_double) ||
	    !read_weight_values(r, strcmp(r->op, "TreeEnsembleClassifier") == 0 ? "class_" : "target_", &w, weights_double))
		return false;
	if (trees_in_order(&n, &w, &runs, &num_runs))
		ok = read_trees_in_order(r, f, &n, &w, runs, num_runs, num_outputs, watch, all_rows_touch);
	else
		ok = read_items_v3(r, &n, &w, num_outputs) && build_trees(r, f, watch, all_rows_touch);
	free(runs);
	return ok;
}
