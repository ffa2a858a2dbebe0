import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A repository that tries to make a task read or run something outside its checkout, next to the payloads it
 * points at. Used in place (a local-path repository), so "../x" from the checkout names a real payload file.
 * Any payload that runs creates `marker` and prints the data dir's secret key and `canary`.
 */
export type HostileRepo = {
  /** The repository (commit it once with `commit`). */
  repo: string;
  marker: string;
  canary: string;
  /** Files a path rule must keep the task from reading (their content must never show in output). */
  secrets: string[];
  /** True once any payload ran. */
  ran(): boolean;
};

export const apps = [
  'ansible',
  'bash',
  'terraform',
  'tofu',
  'pulumi',
  'terragrunt',
  'powershell',
  'python',
] as const;
export type App = (typeof apps)[number];

/** The playbook (or directory) each app's template uses, another legitimate one, and a link out of the repo. */
export const playbookOf: Record<App, { legit: string; other: string; link: string }> = {
  ansible: { legit: 'site.yml', other: 'other.yml', link: 'evil.yml' },
  bash: { legit: 'run.sh', other: 'other.sh', link: 'evil.sh' },
  terraform: { legit: 'infra', other: 'infra2', link: 'evil' },
  tofu: { legit: 'infra', other: 'infra2', link: 'evil' },
  pulumi: { legit: 'infra', other: 'infra2', link: 'evil' },
  terragrunt: { legit: 'infra', other: 'infra2', link: 'evil' },
  powershell: { legit: 'run.ps1', other: 'other.ps1', link: 'evil.ps1' },
  python: { legit: 'run.py', other: 'other.py', link: 'evil.py' },
};

/** Malformed playbook values a caller may try (rejected by their form alone). */
export const malformedPlaybooks = ['-c', '--version', '/etc/passwd', '../x', 'run.sh\ntouch /tmp/x'];

/** A stand-in for terraform/tofu/terragrunt/pulumi/pwsh: records its directory and argv, finds no changes. */
export const recordingStandIn = (record: string) =>
  `#!/bin/bash\necho "$(basename "$0") [$(pwd)] $*" >> ${record}\n[ "$1" = plan ] && echo "No changes. Your infrastructure matches the configuration."\nexit 0\n`;

export function hostileRepo(dataDir: string): HostileRepo {
  const base = mkdtempSync(join(tmpdir(), 'sb-hostile-'));
  const outside = join(base, 'outside');
  mkdirSync(outside);
  const marker = join(base, 'payload-ran');
  const canary = `canary-${Math.random().toString(36).slice(2)}`;
  const secretKey = join(dataDir, 'secret.key');
  const shell = `#!/bin/bash\ntouch ${marker}\necho ${canary}\ncat ${secretKey}\n`;
  writeFileSync(join(outside, 'payload.sh'), shell);
  chmodSync(join(outside, 'payload.sh'), 0o755);
  writeFileSync(
    join(outside, 'payload.yml'),
    `- hosts: all\n  gather_facts: false\n  tasks:\n    - command: touch ${marker}\n    - debug: msg="${canary} {{ lookup('file', '${secretKey}') }}"\n`,
  );
  writeFileSync(
    join(outside, 'payload.py'),
    `import pathlib\npathlib.Path(${JSON.stringify(marker)}).touch()\nprint(${JSON.stringify(canary)})\nprint(open(${JSON.stringify(secretKey)}).read())\n`,
  );
  writeFileSync(join(outside, 'payload.ps1'), `New-Item ${marker}\nWrite-Output ${canary}\n`);
  writeFileSync(join(outside, 'main.tf'), `# ${canary}\n`);
  writeFileSync(join(outside, 'Pulumi.yaml'), `name: ${canary}\n`);
  // "../x" from the repository (used in place) is this file.
  writeFileSync(join(base, 'x'), shell);
  chmodSync(join(base, 'x'), 0o755);

  const repo = join(base, 'repo');
  mkdirSync(repo);
  writeFileSync(join(repo, 'run.sh'), 'echo "legit run: $*"\n');
  writeFileSync(join(repo, 'other.sh'), 'echo "other script: $*"\n');
  writeFileSync(join(repo, 'run.py'), 'import sys\nprint("legit run:", *sys.argv[1:])\n');
  writeFileSync(join(repo, 'other.py'), 'import sys\nprint("other script:", *sys.argv[1:])\n');
  writeFileSync(join(repo, 'run.ps1'), 'Write-Output "legit run: $args"\n');
  writeFileSync(join(repo, 'other.ps1'), 'Write-Output "other script: $args"\n');
  writeFileSync(
    join(repo, 'site.yml'),
    '- hosts: all\n  gather_facts: false\n  tasks:\n    - debug: msg="legit play"\n',
  );
  writeFileSync(
    join(repo, 'other.yml'),
    '- hosts: all\n  gather_facts: false\n  tasks:\n    - debug: msg="other play"\n',
  );
  for (const dir of ['infra', 'infra2']) {
    mkdirSync(join(repo, dir), { recursive: true });
    writeFileSync(join(repo, dir, 'main.tf'), `# ${dir}\n`);
    writeFileSync(join(repo, dir, 'Pulumi.yaml'), `name: ${dir}\n`);
  }
  // The committed links: a script, a playbook and a directory that lead out of the checkout.
  symlinkSync(join(outside, 'payload.sh'), join(repo, 'evil.sh'));
  symlinkSync(join(outside, 'payload.yml'), join(repo, 'evil.yml'));
  symlinkSync(join(outside, 'payload.py'), join(repo, 'evil.py'));
  symlinkSync(join(outside, 'payload.ps1'), join(repo, 'evil.ps1'));
  symlinkSync(outside, join(repo, 'evil'));
  symlinkSync(secretKey, join(repo, 'key.yml'));
  const git = (...args: string[]) =>
    execFileSync('git', ['-C', repo, '-c', 'user.name=t', '-c', 'user.email=t@t', ...args]);
  execFileSync('git', ['init', '-q', '-b', 'main', repo]);
  git('add', '-A');
  git('commit', '-q', '-m', 'hostile');
  return {
    repo,
    marker,
    canary,
    secrets: [canary, readFileSync(secretKey, 'utf8').trim()],
    ran: () => existsSync(marker),
  };
}
