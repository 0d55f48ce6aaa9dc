#!/usr/bin/env bash
# The environment is read only through the tunable tables (common/sfs_tunable.h,
# listed by `stripefs-ctl info`), and the libraries never change the
# application's environment (setenv/putenv/unsetenv): a library sets UCX's
# configuration through ucp_config_modify on its own context.
set -u
cd "$SFS_SRC" || exit 1
fails=0
code_dirs="layout common ucx_transport cluster client service tools adio preload"
hits=$(grep -rnE '\b(secure_)?getenv[[:space:]]*\(' $code_dirs --include='*.c' --include='*.h' |
    grep -v '^common/sfs_tunable\.c:' | grep -vE ':[0-9]+:[[:space:]]*(/?\*|//)')
if [ -n "$hits" ]; then
    echo "$hits"
    echo "FAIL: getenv outside common/sfs_tunable.c (read the variable through a tunable table)"
    fails=$((fails + 1))
fi
hits=$(grep -rnE '\b(setenv|putenv|unsetenv)[[:space:]]*\(' $code_dirs --include='*.c' --include='*.h' |
    grep -vE ':[0-9]+:[[:space:]]*(/?\*|//)')
if [ -n "$hits" ]; then
    echo "$hits"
    echo "FAIL: library or tool code changes the process environment"
    fails=$((fails + 1))
fi
[ $fails = 0 ] || exit 1
echo "ok: the environment is read only through the tunable tables, and never written"
