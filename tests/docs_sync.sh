# docs_sync.sh WAKEQ SRCDIR (issue 14): the man pages and the shell completions cannot
# drift from the tool. docs/man/wakeq.1 and dist/completion/* are what `wakeq help --man`
# and `--completion bash|zsh` print from the help table (scripts/gen-docs rewrites them);
# every command of the help table has its section in wakeq(1) and its case in both
# completions; every key of the config tables (src/config.c) is in wakeq.conf(5); the
# pages render without warnings; bash completes a command and its options.
set -eu
WQ=$1
SRC=$2
T=$(mktemp -d /tmp/wakeq-docs.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$WQ" help --man >"$T/wakeq.1"
"$WQ" help --completion bash >"$T/wakeq.bash"
"$WQ" help --completion zsh >"$T/_wakeq"
cmp -s "$T/wakeq.1" "$SRC/docs/man/wakeq.1" || fail "docs/man/wakeq.1 is stale: run scripts/gen-docs"
cmp -s "$T/wakeq.bash" "$SRC/dist/completion/wakeq.bash" || fail "dist/completion/wakeq.bash is stale: run scripts/gen-docs"
cmp -s "$T/_wakeq" "$SRC/dist/completion/_wakeq" || fail "dist/completion/_wakeq is stale: run scripts/gen-docs"

# the commands of the help table, from the overview `wakeq help` prints
cmds=$("$WQ" help | sed -n 's/^  \([a-z][a-z-]*\).*/\1/p' | sort -u)
[ "$(echo "$cmds" | wc -l)" -ge 20 ] || fail "too few commands in the overview: $cmds"
for c in $cmds; do
	grep -qx ".SS $c" "$SRC/docs/man/wakeq.1" || fail "wakeq.1 has no section for '$c'"
	grep -q "^	$c) opts=" "$SRC/dist/completion/wakeq.bash" || fail "bash completion lacks '$c'"
	grep -q "^		'$c:" "$SRC/dist/completion/_wakeq" || fail "zsh completion lacks '$c'"
	# every option of the command's help is in its man section
	"$WQ" help "$c" | sed -n 's/^  \(--[a-z-]*\).*/\1/p' | while read -r o; do
		r=$(printf '%s' "$o" | sed 's/-/\\\\-/g')
		sed -n "/^\.SS $c\$/,/^\.SS /p" "$SRC/docs/man/wakeq.1" | grep -q -- "$r" \
			|| [ "$o" = --db ] || [ "$o" = --config ] || [ "$o" = --help ] \
			|| fail "wakeq.1 section '$c' does not name $o"
	done
done

# every key of the configuration's key tables is documented in wakeq.conf(5)
keys=$(sed -n 's/^[[:space:]]*[A-Z]K("\([a-z_]*\)".*/\1/p' "$SRC/src/config.c" | sort -u)
[ -n "$keys" ] || fail "no keys found in src/config.c"
for k in $keys; do
	grep -qx ".B $k" "$SRC/docs/man/wakeq.conf.5" || fail "wakeq.conf.5 does not document the key '$k'"
done

if command -v groff >/dev/null 2>&1; then
	for p in "$SRC/docs/man/wakeq.1" "$SRC/docs/man/wakeq.conf.5"; do
		w=$(groff -man -Tutf8 -ww -z "$p" 2>&1) || fail "groff failed on $p"
		[ -z "$w" ] || fail "groff warns on $p: $w"
	done
fi

bash -n "$SRC/dist/completion/wakeq.bash" || fail "wakeq.bash: syntax"
got=$(bash -c '. "$1"; COMP_WORDS=(wakeq --db x.db ret); COMP_CWORD=3; _wakeq; echo "${COMPREPLY[*]}"' sh "$SRC/dist/completion/wakeq.bash")
[ "$got" = retry ] || fail "bash: 'wakeq --db x.db ret' completes to '$got'"
got=$(bash -c '. "$1"; COMP_WORDS=(wakeq retry --dr); COMP_CWORD=2; _wakeq; echo "${COMPREPLY[*]}"' sh "$SRC/dist/completion/wakeq.bash")
[ "$got" = --dry-run ] || fail "bash: 'wakeq retry --dr' completes to '$got'"
if command -v zsh >/dev/null 2>&1; then
	zsh -n "$SRC/dist/completion/_wakeq" || fail "_wakeq: syntax"
fi
exit 0
