import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Terraform cannot be installed here: a stand-in on the server's PATH prints a realistic plan with changes,
 * saves it, and applies only that saved plan.
 */
export function terraformStandIn(): string {
  const bin = mkdtempSync(join(tmpdir(), 'signalbox-e2e-bin-'));
  const script = `#!/bin/bash
case "$1" in
  init) echo "Terraform has been successfully initialized!" ;;
  workspace) [ "$2" = list ] && echo "* default" || echo "Switched to workspace." ;;
  plan)
    for a in "$@"; do case "$a" in -out=*) out="\${a#-out=}" ;; esac; done
    echo "  # null_resource.example will be created"
    echo "Plan: 1 to add, 0 to change, 0 to destroy."
    echo "saved plan" > "$out" ;;
  apply) [ -f "\${@: -1}" ] || exit 1; echo "Apply complete! Resources: 1 added, 0 changed, 0 destroyed." ;;
esac
`;
  writeFileSync(join(bin, 'terraform'), script);
  chmodSync(join(bin, 'terraform'), 0o755);
  return bin;
}

/** The server settings that put the stand-in first on its PATH and let its sandboxed tasks run it. */
export function terraformStandInEnv(): Record<string, string> {
  const bin = terraformStandIn();
  return { PATH: `${bin}:${process.env.PATH}`, SIGNALBOX_TASK_SANDBOX_PATHS: bin };
}
