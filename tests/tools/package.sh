#!/bin/bash
# tool_package — what a build uses: enormous.ld installed, the pkg-config
# flags, and a CMake consumer with find_package(enormoustext) +
# enormoustext_huge_text.
. "$(dirname "$0")/lib.sh"

p=$W/prefix
t install -- "$TT_CMAKE" --install "$TT_BUILD_DIR" --prefix "$p"
expect_rc 0 "cmake --install"
ld=$p/share/enormoustext/enormous.ld
[ -s "$ld" ] || fail "enormous.ld was not installed as $ld"
pc=$p/$TT_INSTALL_LIBDIR/pkgconfig
command -v pkg-config >/dev/null || fail "pkg-config is missing (Debian: apt-get install pkg-config)"
t pcnoscript -- env PKG_CONFIG_PATH="$pc" pkg-config --variable=huge_text_ldflags_noscript enormoustext
expect_rc 0; expect_out "^-Wl,-z,max-page-size=0x200000 -Wl,-z,separate-code\$" "huge_text_ldflags_noscript"
t pcgold -- env PKG_CONFIG_PATH="$pc" pkg-config --variable=huge_text_ldflags_gold enormoustext
expect_rc 0; expect_out "^-Wl,-z,max-page-size=0x200000\$" "huge_text_ldflags_gold (gold refuses -z separate-code)"
t pcflags -- env PKG_CONFIG_PATH="$pc" pkg-config --variable=huge_text_ldflags enormoustext
expect_rc 0; expect_out "^-Wl,-T,[^ ]*/enormous.ld\$" "huge_text_ldflags (the script alone)"
flags=$(PKG_CONFIG_PATH="$pc" pkg-config --variable=huge_text_ldflags enormoustext)
script=$(sed -n 's/^-Wl,-T,\([^ ]*\)$/\1/p' "$OUT")
[ "$(realpath "$script")" = "$(realpath "$ld")" ] || fail "huge_text_ldflags names $script, not the installed $ld"
printf 'int main(void) { return 0; }\n' >"$W/m.c"
# shellcheck disable=SC2086 # the flags are words
t pclink -- "$TT_CC" "$W/m.c" $flags -o "$W/m"
expect_rc 0; expect_no_err
readelf -lW "$W/m" | awk '$1 == "LOAD" && / R E / { exit !($NF == "0x200000" && $6 == "0x200000") }' ||
	fail "linked with the pkg-config flags, the text is not one padded 2 MiB-aligned window: $(readelf -lW "$W/m" | grep LOAD)"
# a CMake project that uses the installed package
mkdir -p "$W/app"
cp "$TT_SRC/../../examples/script.c" "$TT_SRC/../../examples/bigcode.h" "$TT_SRC/../../examples/example_text.h" "$W/app/"
cat >"$W/app/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.16)
project(app C)
find_package(enormoustext 0.2 REQUIRED)
add_executable(app script.c)
enormoustext_huge_text(app)
CM
# (in a sanitized tree the installed library needs the sanitizer runtime)
t configure -- "$TT_CMAKE" -S "$W/app" -B "$W/app/build" -DCMAKE_PREFIX_PATH="$p" -DCMAKE_C_COMPILER="$TT_CC" \
	-DCMAKE_C_FLAGS="${TT_CFLAGS:-}" -DCMAKE_EXE_LINKER_FLAGS="${TT_CFLAGS:-}"
expect_rc 0 "configuring a project with find_package(enormoustext)"
t build -- "$TT_CMAKE" --build "$W/app/build"
expect_rc 0 "building it with enormoustext_huge_text(app)"
cp "$W/app/build/app" "$W/app/copy"
t off -- env LD_LIBRARY_PATH="$p/$TT_INSTALL_LIBDIR" ENORMOUSTEXT=0 "$W/app/copy"
expect_rc 0; expect_out "on huge pages \(0%\)\$" "with the library off"
t on -- env LD_LIBRARY_PATH="$p/$TT_INSTALL_LIBDIR" "$W/app/copy"
expect_rc 0; expect_out "on huge pages \(100%\)\$" "linked with enormous.ld and -lenormoustext: all of its text huge"

pass
