/*
 * deploy.c's runtime half in C++, through grove.hpp, built with
 * `c++ deploy.cpp $(pkg-config --cflags --libs grove)`: loads an artifact and prints one
 * prediction per row of a CSV of floats. First it checks that failures arrive as
 * grove::Error with libgrove's status and message: a missing artifact (an I/O error naming
 * it) and rows that are not whole rows (an argument error); it exits 1 if they do not.
 *
 *   deploy-cpp ARTIFACT ROWS.csv
 */
#include <grove.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

/* Whether f() throws grove::Error with status and a message containing text. */
template <typename F> static bool throws(F f, GroveStatus status, const std::string &text)
{
	try {
		f();
	} catch (const grove::Error &e) {
		if (e.status() == status && std::string(e.what()).find(text) != std::string::npos)
			return true;
		std::cerr << "unexpected grove::Error " << grove_status_name(e.status()) << ": " << e.what() << "\n";
		return false;
	}
	std::cerr << "no grove::Error thrown\n";
	return false;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		std::cerr << "usage: deploy-cpp ARTIFACT ROWS.csv\n";
		return 2;
	}
	const std::string missing = std::string(argv[1]) + ".missing";
	if (!throws([&] { grove::Model m(missing); }, GROVE_ERROR_IO, missing))
		return 1;
	try {
		grove::Model model(argv[1]);
		std::vector<float> rows;
		std::ifstream in(argv[2]);
		for (std::string line; std::getline(in, line);) {
			std::istringstream fields(line);
			for (std::string field; std::getline(fields, field, ',');)
				rows.push_back(std::strtof(field.c_str(), nullptr));
		}
		if (rows.size() < 2) {
			std::cerr << argv[2] << ": no rows\n";
			return 1;
		}
		std::vector<float> partial(rows.begin(), rows.end() - 1);
		if (!throws([&] { model.predict(partial); }, GROVE_ERROR_ARGUMENT, "not whole rows"))
			return 1;
		grove::Model moved(std::move(model));
		for (float p : moved.predict(rows))
			std::printf("%.9g\n", p);
	} catch (const grove::Error &e) {
		std::cerr << grove_status_name(e.status()) << ": " << e.what() << "\n";
		return 1;
	}
	return 0;
}
