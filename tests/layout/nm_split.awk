# nm_split.awk — the output of `nm -A -g OBJECTS...` split into what each
# object file defines and what it uses, for command.sh and modules.sh:
#
#   awk -v naming=command|modules -v defs=FILE -v uses=FILE -f nm_split.awk NM_OUTPUT
#
# nm prints FILE:VALUE TYPE NAME for a symbol the file defines and
# FILE: U NAME (or w) for one it uses; each line goes to DEFS or USES as
# "NAME MODULE".  A file's module, by naming:
#   command  .../enormoustext/cmd/run.c.o -> cmd/run.c; .../opts.c.o -> opts.c
#   modules  .../libenormoustext/src/runtime/pass.c.o -> runtime/pass
function module(path,   m) {
	m = path
	if (naming == "command") {
		sub(/.*\//, "", m)
		sub(/\.o$/, "", m)
		return (path ~ /\/cmd\/[^\/]*$/) ? "cmd/" m : m
	}
	sub(/\.o$/, "", m)
	sub(/\.c$/, "", m)
	sub(/.*\/libenormoustext\/src\//, "", m)
	return m
}
{
	i = index($0, ":")
	m = module(substr($0, 1, i - 1))
	n = split(substr($0, i + 1), a, " ")
	if (n == 3)
		print a[3], m >defs
	else if (n == 2)
		print a[2], m >uses
}
