import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The plan JSON the stand-in saves when the working directory has no plan.json: one resource to create. */
const createOnePlan = JSON.stringify({
  format_version: '1.2',
  resource_changes: [
    {
      address: 'null_resource.example',
      change: { actions: ['create'], before: null, after: { triggers: null }, after_unknown: { id: true } },
    },
  ],
});

/**
 * Terraform cannot be installed here: a stand-in on the server's PATH prints a realistic plan with changes,
 * saves it (the working directory's plan.json when there is one, in Terraform's plan JSON format), shows it as
 * JSON (`show -json`), and applies only that saved plan. A refresh-only plan saves the working directory's
 * drift.json (changes made outside Terraform) when there is one; -detailed-exitcode exits 2 for a plan with
 * changes.
 */
export function terraformStandIn(): string {
  const bin = mkdtempSync(join(tmpdir(), 'signalbox-e2e-bin-'));
  const script = `#!/bin/bash
case "$1" in
  init) echo "Terraform has been successfully initialized!" ;;
  workspace) [ "$2" = list ] && echo "* default" || echo "Switched to workspace." ;;
  plan)
    detailed=""; refresh_only=""
    for a in "$@"; do case "$a" in -out=*) out="\${a#-out=}" ;; -detailed-exitcode) detailed=1 ;; -refresh-only) refresh_only=1 ;; esac; done
    if [ -n "$refresh_only" ]; then
      if [ -f drift.json ]; then
        echo "Note: Objects have changed outside of Terraform"
        cp drift.json "$out"
        if [ -n "$detailed" ]; then exit 2; fi
      else
        echo "No changes. Your infrastructure still matches the configuration."
      fi
      exit 0
    fi
    if [ -f plan.json ]; then
      echo "Plan: 1 to add, 1 to change, 1 to destroy, 2 to replace."
      cp plan.json "$out"
    else
      echo "  # null_resource.example will be created"
      echo "Plan: 1 to add, 0 to change, 0 to destroy."
      echo '${createOnePlan}' > "$out"
    fi
    if [ -n "$detailed" ]; then exit 2; fi ;;
  show) [ "$2" = -json ] && [ -f "$3" ] && cat "$3" || exit 1 ;;
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

/** The secret a plan's sensitive attribute holds: the console never shows it. */
export const PLAN_SECRET = 'e2e-pl4n-s3cret';

/** A plan's JSON (Terraform's format) with every action, and a sensitive attribute. */
export const everyActionPlan = JSON.stringify({
  format_version: '1.2',
  resource_changes: [
    { address: 'aws_instance.web', change: { actions: ['create'], before: null, after: { ami: 'ami-1' } } },
    {
      address: 'aws_db_instance.main',
      change: {
        actions: ['update'],
        before: { password: `${PLAN_SECRET}-old`, size: 's' },
        after: { password: PLAN_SECRET, size: 'm' },
        before_sensitive: { password: true },
        after_sensitive: { password: true },
      },
    },
    {
      address: 'aws_security_group.old',
      change: { actions: ['delete'], before: { name: 'old' }, after: null },
    },
    {
      address: 'aws_instance.db',
      change: { actions: ['delete', 'create'], before: { ami: 'ami-1' }, after: { ami: 'ami-2' } },
    },
    {
      address: 'aws_lb.front',
      change: { actions: ['create', 'delete'], before: { subnets: ['a'] }, after: { subnets: ['a', 'b'] } },
    },
    {
      address: 'null_resource.same',
      change: { actions: ['no-op'], before: { id: '1' }, after: { id: '1' } },
    },
    {
      address: 'data.aws_ami.latest',
      change: { actions: ['read'], before: null, after: { most_recent: true } },
    },
  ],
});
