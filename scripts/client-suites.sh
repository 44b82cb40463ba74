#!/usr/bin/env bash
# client-suites.sh: issue 14's acceptance check. Runs go-redis v9.7.0's own
# test suite (its Ginkgo specs, from the Go module cache) family by family
# against a fresh redis-server 7.0 and a fresh kvserver built from this
# checkout, each on a free port, and prints per family the specs that ran,
# how many passed on each server, the ratio, and every spec that passes on
# redis-server and fails on kvserver (with kvserver's failure). It fails
# when a family's ratio is under 0.95.
#
#   scripts/client-suites.sh              # every family (about 2 minutes)
#   scripts/client-suites.sh hashes,geo   # only these
#
# Families: bitmaps, server, strings, keyspace, transactions, hashes, lists,
# sets, sorted sets, hyperloglog, pub/sub, scripting, streams, geo. The test
# is tests/client_suites_test.go (TestClientSuiteGoRedis); with
# KVSERVER_DIFF_AGAINST_REDIS=1 it runs redis-server against redis-server,
# which must give a ratio of 1 everywhere.
set -euo pipefail
cd "$(dirname "$0")/.."
# With KVSERVER_REDIS_PY_TESTS naming a redis-py checkout's tests directory
# it also runs redis-py's suite the same way (TestClientSuiteRedisPy, about
# 30 s; DEVELOPERS.md says how to get one).
KVSERVER_CLIENT_SUITES=${1:-all} exec go test -count=1 -timeout 30m -run '^TestClientSuite(GoRedis|RedisPy)$' -v ./tests
