# tests/fuzz/: libFuzzer targets. `make fuzzers` builds them with clang (never
# `make all` or `make check`); tests/fuzz/test_fuzz.sh runs each for a while.
# They compile the common .c files they need directly (not libsfs_common.la),
# so that every line is instrumented for coverage and the sanitizers.
#
# To add a target fuzz_<name>, inside the `if HAVE_CLANG` block:
#   1. FUZZ_TARGETS += tests/fuzz/fuzz_<name>
#   2. FUZZ_<NAME>_SRCS = the entry point and the .c files it needs, from
#      $(top_srcdir); FUZZ_<NAME>_DEPS = headers; FUZZ_<NAME>_LIBS = libraries
#   3. a rule like the one for fuzz_config (two lines, using $(FUZZ_LINK))
#   4. seeds in tests/fuzz/corpus/<name>/ and the sources in EXTRA_DIST below.
if HAVE_CLANG
FUZZ_TARGETS = tests/fuzz/fuzz_config tests/fuzz/fuzz_wire tests/fuzz/fuzz_meta_writes \
	tests/fuzz/fuzz_mgmt_state tests/fuzz/fuzz_mgmt_raft

FUZZ_CFLAGS = -g -O1 -std=gnu11 -Wall -Wextra -Wno-unused-parameter \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer \
	-I$(top_srcdir)/common -I$(top_srcdir)/layout -I$(top_builddir)
FUZZ_LINK = $(MKDIR_P) tests/fuzz && $(CLANG) $(FUZZ_CFLAGS) -o $@
FUZZ_COMMON_SRCS = $(top_srcdir)/common/sfs_errno.c $(top_srcdir)/common/sfs_log.c \
	$(top_srcdir)/common/sfs_tunable.c $(top_srcdir)/common/sfs_units.c
FUZZ_COMMON_DEPS = $(top_srcdir)/common/sfs_errno.h $(top_srcdir)/common/sfs_log.h \
	$(top_srcdir)/common/sfs_alloc.h

FUZZ_CONFIG_SRCS = $(top_srcdir)/tests/fuzz/fuzz_config.c $(top_srcdir)/common/sfs_config.c \
	$(top_srcdir)/common/sfs_config_yaml.c $(top_srcdir)/common/sfs_config_check.c \
	$(top_srcdir)/common/sfs_config_write.c $(top_srcdir)/common/sfs_config_generate.c \
	$(top_srcdir)/common/sfs_config_mirror.c $(top_srcdir)/common/sfs_config_pool.c \
	$(FUZZ_COMMON_SRCS)
FUZZ_CONFIG_DEPS = $(top_srcdir)/common/sfs_config.h $(top_srcdir)/common/sfs_config_internal.h \
	$(FUZZ_COMMON_DEPS)
FUZZ_CONFIG_LIBS = $(YAML_CFLAGS) $(YAML_LIBS)
tests/fuzz/fuzz_config: $(FUZZ_CONFIG_SRCS) $(FUZZ_CONFIG_DEPS)
	$(AM_V_CCLD)$(FUZZ_LINK) $(FUZZ_CONFIG_SRCS) $(FUZZ_CONFIG_LIBS)

# the wire protocol: headers, every request and reply decoder, maps, paths
FUZZ_PROTO_SRCS = $(top_srcdir)/common/sfs_proto.c \
	$(top_srcdir)/common/sfs_proto_ops.c $(top_srcdir)/common/sfs_proto_replies.c \
	$(top_srcdir)/common/sfs_proto_local.c $(top_srcdir)/common/sfs_proto_lock.c \
	$(top_srcdir)/common/sfs_proto_quota.c $(top_srcdir)/common/sfs_proto_mirror.c \
	$(top_srcdir)/common/sfs_proto_pool.c $(top_srcdir)/common/sfs_proto_migrate.c \
	$(top_srcdir)/common/sfs_proto_bound.c $(top_srcdir)/common/sfs_proto_address.c \
	$(top_srcdir)/common/sfs_map.c $(top_srcdir)/common/sfs_path.c $(FUZZ_COMMON_SRCS)
FUZZ_WIRE_SRCS = $(top_srcdir)/tests/fuzz/fuzz_wire.c $(FUZZ_PROTO_SRCS)
FUZZ_WIRE_DEPS = $(top_srcdir)/common/sfs_proto.h $(top_srcdir)/common/sfs_buf.h $(top_srcdir)/common/sfs_proto_address.h \
	$(top_srcdir)/common/sfs_map.h $(top_srcdir)/common/sfs_path.h $(FUZZ_COMMON_DEPS)
tests/fuzz/fuzz_wire: $(FUZZ_WIRE_SRCS) $(FUZZ_WIRE_DEPS)
	$(AM_V_CCLD)$(FUZZ_LINK) $(FUZZ_WIRE_SRCS)

# the metadata mirror's write sets (a mirror applies what its primary sends)
FUZZ_META_WRITES_SRCS = $(top_srcdir)/tests/fuzz/fuzz_meta_writes.c \
	$(top_srcdir)/service/sfs_meta_writes.c $(top_srcdir)/service/sfs_meta_reply_record.c \
	$(FUZZ_PROTO_SRCS)
FUZZ_META_WRITES_DEPS = $(top_srcdir)/service/sfs_meta_writes.h \
	$(top_srcdir)/service/sfs_meta_reply_record.h $(top_srcdir)/service/sfs_meta_key.h \
	$(FUZZ_WIRE_DEPS)
tests/fuzz/fuzz_meta_writes: $(FUZZ_META_WRITES_SRCS) $(FUZZ_META_WRITES_DEPS)
	$(AM_V_CCLD)$(FUZZ_LINK) -I$(top_srcdir)/service $(FUZZ_META_WRITES_SRCS)

# management's state files (mirror-state, meta-mirror-state)
FUZZ_MGMT_STATE_SRCS = $(top_srcdir)/tests/fuzz/fuzz_mgmt_state.c \
	$(top_srcdir)/service/sfs_mgmt_state.c $(FUZZ_PROTO_SRCS)
FUZZ_MGMT_STATE_DEPS = $(top_srcdir)/service/sfs_mgmt_state.h $(FUZZ_WIRE_DEPS)
tests/fuzz/fuzz_mgmt_state: $(FUZZ_MGMT_STATE_SRCS) $(FUZZ_MGMT_STATE_DEPS)
	$(AM_V_CCLD)$(FUZZ_LINK) -I$(top_srcdir)/service $(FUZZ_MGMT_STATE_SRCS)

# management's replicated commands and snapshots (docs/management-raft.md)
FUZZ_MGMT_RAFT_SRCS = $(top_srcdir)/tests/fuzz/fuzz_mgmt_raft.c \
	$(top_srcdir)/service/sfs_mgmt_raft_cmd.c $(FUZZ_COMMON_SRCS)
FUZZ_MGMT_RAFT_DEPS = $(top_srcdir)/service/sfs_mgmt_raft_cmd.h $(FUZZ_COMMON_DEPS)
tests/fuzz/fuzz_mgmt_raft: $(FUZZ_MGMT_RAFT_SRCS) $(FUZZ_MGMT_RAFT_DEPS)
	$(AM_V_CCLD)$(FUZZ_LINK) -I$(top_srcdir)/service $(FUZZ_MGMT_RAFT_SRCS)

fuzzers: $(FUZZ_TARGETS)
CLEANFILES += $(FUZZ_TARGETS)
else
fuzzers:
	@echo "make fuzzers: configure found no clang; install clang and run configure again" >&2
	@exit 1
endif
.PHONY: fuzzers

EXTRA_DIST += tests/fuzz/README.md tests/fuzz/test_fuzz.sh tests/fuzz/fuzz_config.c tests/fuzz/fuzz_wire.c \
	tests/fuzz/fuzz_meta_writes.c tests/fuzz/fuzz_mgmt_state.c tests/fuzz/fuzz_mgmt_raft.c \
	tests/fuzz/config.dict
