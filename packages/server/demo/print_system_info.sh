#!/usr/bin/env bash
# Prints a short report about the machine that runs the task. Extra arguments are echoed back.
set -u

section() { printf '\n== %s ==\n' "$1"; }
run() { if command -v "$1" >/dev/null 2>&1; then "$@"; else echo "($1 is not installed)"; fi; }

section "Host"
echo "Hostname: $(run hostname)"
echo "User:     $(id -un 2>/dev/null || echo unknown)"
echo "Date:     $(date -u '+%Y-%m-%dT%H:%M:%SZ')"

section "System"
run uname -a
if [ -r /etc/os-release ]; then . /etc/os-release && echo "OS: ${PRETTY_NAME:-unknown}"; fi
run uptime

section "Resources"
if [ -r /proc/cpuinfo ]; then echo "CPUs: $(grep -c '^processor' /proc/cpuinfo)"; fi
if [ -r /proc/meminfo ]; then grep -E '^(MemTotal|MemAvailable):' /proc/meminfo; fi
run df -h .

section "Task"
echo "Signalbox task type: ${SEMAPHORE_TASK_TYPE:-task}"
echo "Arguments: ${*:-none}"
echo "Bash: ${BASH_VERSION}"
