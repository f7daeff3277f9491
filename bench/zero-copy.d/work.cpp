// work.cpp — a C++ file that takes clang++ a few seconds (templates, <regex>, STL);
// the clang++ workload of bench/zero-copy.
#include <algorithm>
#include <numeric>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <unordered_map>
#include <variant>
#include <vector>
template <int N> struct Fib { static constexpr long v = Fib<N - 1>::v + Fib<N - 2>::v; };
template <> struct Fib<1> { static constexpr long v = 1; };
template <> struct Fib<0> { static constexpr long v = 0; };
template <typename T, int N> struct Node {
	std::map<std::string, std::vector<T>> m;
	std::unordered_map<int, std::tuple<T, std::string, double>> u;
	std::variant<int, double, std::string, T> v;
	long run(int k) {
		std::vector<T> x(k);
		std::iota(x.begin(), x.end(), T{});
		std::sort(x.begin(), x.end(), std::greater<T>());
		std::ostringstream os;
		for (auto &e : x) os << e;
		std::regex re("[0-9]+(" + std::to_string(N) + ")?");
		return std::distance(std::sregex_iterator(os.str().begin(), os.str().end(), re), std::sregex_iterator()) + Fib<N % 40>::v;
	}
};
#define INST(n) long f##n(int k) { Node<long, n> a; Node<double, n> b; Node<int, n> c; return a.run(k) + b.run(k) + c.run(k); }
#define I10(n) INST(n##0) INST(n##1) INST(n##2) INST(n##3) INST(n##4) INST(n##5) INST(n##6) INST(n##7) INST(n##8) INST(n##9)
INST(10) INST(11) INST(12) INST(13) INST(14)
int main() { return (int)(f10(3) & 1); }
