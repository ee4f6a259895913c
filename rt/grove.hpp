/*
 * libgrove for C++ (C++11 or later): grove.h's calls on a model handle that frees itself,
 * with failures thrown as grove::Error, which carries libgrove's status and message.
 *
 *   grove::Model model("model.so");                      // throws grove::Error on failure
 *   std::vector<float> p = model.predict(rows);           // rows: num_features() floats a row
 *   std::vector<float> m = model.predict(rows, GROVE_PREDICT_MARGIN);
 *
 * A Model may be moved, not copied; a moved-from Model holds no model, and its calls fail
 * (throw) as grove.h's do on NULL. Like grove.h's, its calls may run on several threads at
 * once. Link as for grove.h: $(pkg-config --cflags --libs grove).
 */
#ifndef GROVE_HPP
#define GROVE_HPP

#include "grove.h"

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace grove {

/* What a failed call threw: status() is grove.h's GroveStatus, what() its message. */
class Error : public std::runtime_error {
public:
	Error(GroveStatus status, const std::string &message) : std::runtime_error(message), status_(status) {}
	GroveStatus status() const noexcept { return status_; }

private:
	GroveStatus status_;
};

namespace detail {
inline void check(GroveStatus status, const GroveError &err)
{
	if (status != GROVE_OK)
		throw Error(status, err.message);
}
} // namespace detail

class Model {
public:
	/* Load the artifact at path (grove_load). */
	explicit Model(const std::string &path)
	{
		GroveError err;
		detail::check(grove_load(path.c_str(), &model_, &err), err);
	}
	~Model() { grove_free(model_); }
	Model(Model &&other) noexcept : model_(other.model_) { other.model_ = nullptr; }
	Model &operator=(Model &&other) noexcept
	{
		if (this != &other) {
			grove_free(model_);
			model_ = other.model_;
			other.model_ = nullptr;
		}
		return *this;
	}
	Model(const Model &) = delete;
	Model &operator=(const Model &) = delete;

	/* "cpu", "gpusim", "cuda" or "rocm" (grove_device). */
	std::string device() const
	{
		const char *d = grove_device(model_);
		return d ? d : "";
	}
	std::size_t num_features() const { return grove_num_features(model_); }
	std::size_t num_outputs(unsigned flags = 0) const { return grove_num_outputs(model_, flags); }
	/* Column i's name, or "" where the model names no columns. */
	std::string feature_name(std::size_t i) const
	{
		const char *name = grove_feature_name(model_, i);
		return name ? name : "";
	}
	/* The values column i takes by name (grove_category_values; value k stands for category k), or none. */
	std::vector<std::string> category_values(std::size_t i) const
	{
		std::size_t count = 0;
		const char *const *values = grove_category_values(model_, i, &count);
		return values ? std::vector<std::string>(values, values + count) : std::vector<std::string>();
	}
	std::size_t num_labels() const { return grove_num_labels(model_); }
	/* Label k: its string for string labels, its integer in decimal for integer labels. */
	std::string label(std::size_t k) const
	{
		GroveError err;
		long long value = 0;
		const char *text = nullptr;
		detail::check(grove_label(model_, k, &value, &text, &err), err);
		return text ? std::string(text) : std::to_string(value);
	}

	/* grove_predict and grove_predict_f64 into the caller's buffer of out_len floats. */
	void predict(const float *rows, std::size_t nrows, float *out, std::size_t out_len, unsigned flags = 0) const
	{
		GroveError err;
		detail::check(grove_predict(model_, rows, nrows, num_features(), out, out_len, flags, &err), err);
	}
	void predict(const double *rows, std::size_t nrows, float *out, std::size_t out_len, unsigned flags = 0) const
	{
		GroveError err;
		detail::check(grove_predict_f64(model_, rows, nrows, num_features(), out, out_len, flags, &err), err);
	}
	/* Rows packed one after another, num_features() values each; num_outputs(flags) values a row back. */
	std::vector<float> predict(const std::vector<float> &rows, unsigned flags = 0) const { return predict_all(rows, flags); }
	std::vector<float> predict(const std::vector<double> &rows, unsigned flags = 0) const
	{
		return predict_all(rows, flags);
	}

	/* The C handle, for grove.h's other calls (grove_predict_with_workspace, grove_predict_device). */
	GroveModel *get() const noexcept { return model_; }

private:
	template <typename T> std::vector<float> predict_all(const std::vector<T> &rows, unsigned flags) const
	{
		std::size_t width = num_features();
		if (!model_)
			throw Error(GROVE_ERROR_ARGUMENT, "grove::Model: no model (moved from)");
		if (width == 0)
			throw Error(GROVE_ERROR_ARGUMENT, "the model reads no features, so rows cannot be counted: "
			                                  "use predict(rows, nrows, out, out_len)");
		if (rows.size() % width)
			throw Error(GROVE_ERROR_ARGUMENT, std::to_string(rows.size()) + " values are not whole rows of " +
			                                      std::to_string(width) + " features");
		std::size_t nrows = rows.size() / width;
		std::vector<float> out(nrows * num_outputs(flags));
		predict(rows.data(), nrows, out.data(), out.size(), flags);
		return out;
	}

	GroveModel *model_ = nullptr;
};

} // namespace grove

#endif
