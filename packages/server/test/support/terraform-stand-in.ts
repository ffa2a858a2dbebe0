/**
 * The Terraform (and OpenTofu) commands of a stand-in script, as bash `case` arms over `$cmd` with its arguments
 * in `$@` (after the command): realistic output, a saved plan file, `show -json` of it, the state lock, the state's
 * serial and lineage, and -detailed-exitcode.
 *
 * - The state: `$TF_STANDIN_STATE` (default terraform.tfstate of the working directory) holds its serial and
 *   lineage ("SERIAL LINEAGE"); a missing one is serial 0 of a fixed lineage. Every plan's JSON carries them as
 *   `prior_state` (`serial`, `lineage`), as the plan was made from that state.
 * - plan -out=FILE: writes the plan file: `plan.json` of the working directory when there is one (the plan's
 *   JSON in Terraform's format), else a plan creating null_resource.example. "No changes." with a `nochanges`
 *   file. With -refresh-only: the changes made outside Terraform, `drift.json` of the working directory (a plan
 *   JSON with `resource_drift`), or "No changes." without one. -detailed-exitcode: exit 2 when the plan has
 *   changes, 0 when it has none.
 * - show -json FILE: prints the JSON the plan file holds (Terraform's documented plan representation).
 * - apply FILE: refuses a plan made from another state than the current one ("Saved plan is stale"), else moves
 *   the state's serial on and appends the SHA-256 of the plan file it applied to `$TF_STANDIN_STATE.applied`.
 * - a `locked` file in the working directory holds the state lock (its text names who holds it): plan and apply
 *   wait up to -lock-timeout (whole seconds; Ns, Nm) for the file to go, then print Terraform's lock error and
 *   exit 1.
 * - with TF_HTTP_ADDRESS set (Terraform's http backend, as the built-in state backend's runs have it), plan and
 *   apply talk to it with curl as Terraform does: LOCK (LockInfo JSON; a 423 is retried until -lock-timeout, then
 *   Terraform's lock error naming the holder), GET the state, apply POSTs the next state with ?ID=<lock id>, and
 *   UNLOCK. The credentials go to curl on its stdin (-K -), never in its argv. Apply keeps the lock while a
 *   `hold-lock` file lies beside the argv record. The state written names the task (SIGNALBOX_TASK_ID) and the
 *   serial it applied on.
 */
export const terraformCommands = `
  lock_seconds() {
    t=0
    for a in "$@"; do case "$a" in -lock-timeout=*s) t="\${a#-lock-timeout=}"; t="\${t%s}" ;; -lock-timeout=*m) t="\${a#-lock-timeout=}"; t=$(( \${t%m} * 60 )) ;; esac; done
    echo "$t"
  }
  lock_error() {
    cat >&2 <<LOCK
╷
│ Error: Error acquiring the state lock
│ 
│ Error message: $2
│ Lock Info:
│   ID:        $3
│   Path:      terraform.tfstate
│   Operation: OperationTypeApply
│   Who:       $1
│   Version:   1.9.5
│   Created:   2026-11-29 06:58:01.123456789 +0000 UTC
│   Info:      
│ 
│ 
│ Terraform acquires a state lock to protect the state from being written
│ by multiple users at the same time. Please resolve the issue above and try
│ again. For most commands, you can disable locking with the "-lock=false"
│ flag, but this is not recommended.
╵
LOCK
    exit 1
  }
  state_file="\${TF_STANDIN_STATE:-terraform.tfstate}"
  state_serial=0; state_lineage=3f1c9a52-7d4e-4b8a-9c61-0e2d5f7a8b90
  [ -f "$state_file" ] && read -r state_serial state_lineage < "$state_file"
  # The plan's JSON with the state it was made from as prior_state (first, so apply reads it back first).
  with_prior() {
    sed "1s/^[[:space:]]*{/{\\"prior_state\\":{\\"format_version\\":\\"1.0\\",\\"serial\\":$state_serial,\\"lineage\\":\\"$state_lineage\\",\\"values\\":{}},/"
  }
  # One request to the http backend: the body lands in $TMPDIR/http.body, the status in HTTP_CODE.
  http_call() {
    local data=()
    [ -n "$3" ] && data=(--data-binary "@$3")
    HTTP_CODE=$(printf 'user = "%s:%s"\n' "$TF_HTTP_USERNAME" "$TF_HTTP_PASSWORD" |
      curl -sS -K - -X "$1" -o "$TMPDIR/http.body" -w '%{http_code}' -H 'Content-Type: application/json' "\${data[@]}" "$2")
  }
  http_fail() { echo "Error: $1: HTTP error: $HTTP_CODE" >&2; cat "$TMPDIR/http.body" >&2; exit 1; }
  http_lock() {
    op="$1"; shift
    LOCK_ID="stand-in-$SIGNALBOX_TASK_ID-$op-$RANDOM$RANDOM"
    printf '{"ID":"%s","Operation":"OperationType%s","Info":"","Who":"task%s@stand-in","Version":"1.9.5","Created":"%s","Path":""}' \
      "$LOCK_ID" "$op" "$SIGNALBOX_TASK_ID" "$(date -u +%FT%TZ)" > "$TMPDIR/lock.json"
    end=$(( $(date +%s) + $(lock_seconds "$@") ))
    echo "Acquiring state lock. This may take a few moments..."
    while :; do
      http_call LOCK "$TF_HTTP_LOCK_ADDRESS" "$TMPDIR/lock.json"
      [ "$HTTP_CODE" = 200 ] && return 0
      [ "$HTTP_CODE" = 423 ] || [ "$HTTP_CODE" = 409 ] || http_fail "locking the state"
      [ "$(date +%s)" -ge "$end" ] && break
      sleep 0.2
    done
    who=$(grep -o '"Who":"[^"]*"' "$TMPDIR/http.body" | cut -d'"' -f4)
    id=$(grep -o '"ID":"[^"]*"' "$TMPDIR/http.body" | cut -d'"' -f4)
    lock_error "$who" "HTTP remote state already locked: ID=$id" "$id"
  }
  http_unlock() {
    echo "Releasing state lock. This may take a few moments..."
    http_call UNLOCK "$TF_HTTP_UNLOCK_ADDRESS" "$TMPDIR/lock.json"
    [ "$HTTP_CODE" = 200 ] || http_fail "unlocking the state"
  }
  http_serial() {
    http_call GET "$TF_HTTP_ADDRESS"
    case "$HTTP_CODE" in
      200) SERIAL=$(grep -o '"serial": *[0-9]*' "$TMPDIR/http.body" | head -1 | grep -o '[0-9]*$') ;;
      204|404) SERIAL=0 ;;
      *) http_fail "reading the state" ;;
    esac
    echo "Read the state at serial $SERIAL"
  }
  http_apply() {
    http_lock Apply "$@"
    http_serial
    prev=$SERIAL
    hold="$(dirname "\${SB_RECORD:-/nonexistent/x}")/hold-lock"
    while [ -f "$hold" ]; do sleep 0.1; done
    serial=$(( prev + 1 ))
    printf '{"version":4,"terraform_version":"1.9.5","serial":%d,"lineage":"stand-in-lineage","outputs":{},"resources":[{"mode":"managed","type":"null_resource","name":"example","provider":"provider.null","instances":[{"schema_version":0,"attributes":{"id":"task-%s","applied_on_serial":"%d"},"sensitive_attributes":[]}]}]}\n' \
      "$serial" "$SIGNALBOX_TASK_ID" "$prev" > "$TMPDIR/new.tfstate"
    http_call POST "$TF_HTTP_ADDRESS?ID=$LOCK_ID" "$TMPDIR/new.tfstate"
    [ "$HTTP_CODE" = 200 ] || http_fail "writing the state"
    http_unlock
  }
  lock_wait() {
    [ -f locked ] || return 0
    t=$(lock_seconds "$@")
    end=$(( $(date +%s) + t ))
    while [ -f locked ] && [ "$(date +%s)" -lt "$end" ]; do sleep 0.2; done
    [ -f locked ] || return 0
    lock_error "$(cat locked)" "resource temporarily unavailable" 7d3c1b0e-5f3a-4c1e-9a55-0f1b2c3d4e5f
  }
  case "$cmd" in
  plan)
    lock_wait "$@"
    if [ -n "$TF_HTTP_ADDRESS" ]; then
      # What a careless wrapper might print: the log must show it masked.
      echo "backend password: $TF_HTTP_PASSWORD"
      http_lock Plan "$@"
      http_serial
      http_unlock
    fi
    env | grep '^TF_VAR_' | sort
    out=""; detailed=""; refresh_only=""
    for a in "$@"; do case "$a" in -out=*) out="\${a#-out=}" ;; -detailed-exitcode) detailed=1 ;; -refresh-only) refresh_only=1 ;; esac; done
    if [ -n "$refresh_only" ]; then
      if [ -f drift.json ]; then
        echo "Note: Objects have changed outside of Terraform"
        echo "  # (the changes of drift.json)"
        with_prior < drift.json > "$out"
        if [ -n "$detailed" ]; then exit 2; fi
      else
        echo "No changes. Your infrastructure still matches the configuration."
      fi
      exit 0
    fi
    if [ -f nochanges ]; then
      echo "No changes. Your infrastructure matches the configuration."
      exit 0
    elif [ -f plan.json ]; then
      echo "  # (the changes of plan.json)"
      echo "Plan: several to add, change and destroy."
      with_prior < plan.json > "$out"
    else
      echo "  # null_resource.example will be created"
      echo "Plan: 1 to add, 0 to change, 0 to destroy."
      echo '{"format_version":"1.2","terraform_version":"1.9.5","resource_changes":[{"address":"null_resource.example","mode":"managed","type":"null_resource","name":"example","change":{"actions":["create"],"before":null,"after":{"triggers":null},"after_unknown":{"id":true},"before_sensitive":false,"after_sensitive":{}}}]}' | with_prior > "$out"
    fi
    if [ -n "$detailed" ]; then exit 2; fi
    ;;
  show)
    [ "$1" = -json ] || { echo "stand-in: show needs -json"; exit 64; }
    [ -f "$2" ] || { echo "no saved plan at $2" >&2; exit 1; }
    cat "$2" ;;
  apply)
    lock_wait "$@"
    plan="\${@: -1}"
    [ -f "$plan" ] || { echo "no saved plan at $plan"; exit 1; }
    planned_serial="$(grep -o '"serial":[0-9]*' "$plan" | head -1 | cut -d: -f2)"
    planned_lineage="$(grep -o '"lineage":"[^"]*"' "$plan" | head -1 | cut -d'"' -f4)"
    if [ "\${planned_serial:-$state_serial}" != "$state_serial" ] || [ "\${planned_lineage:-$state_lineage}" != "$state_lineage" ]; then
      echo "╷" >&2
      echo "│ Error: Saved plan is stale" >&2
      echo "│ The given plan file can no longer be applied because the state was changed by another operation after the plan was created." >&2
      echo "╵" >&2
      exit 1
    fi
    echo "$(( state_serial + 1 )) $state_lineage" > "$state_file"
    sha256sum "$plan" | cut -d' ' -f1 >> "$state_file.applied"
    [ -n "$TF_HTTP_ADDRESS" ] && http_apply "$@"
    echo "Apply complete! Resources: 1 added, 0 changed, 0 destroyed." ;;
  esac
`;

/**
 * A terraform/tofu stand-in: records its argv in `record`, initialises, answers the workspace commands (a `hang`
 * file makes `workspace list` hang), then plans, shows and applies as terraformCommands says, with its state in
 * `<record>.tfstate` (shared by every task of the test, as a remote backend would be).
 */
export const terraformScript = (record: string) => `#!/bin/bash
SB_RECORD=${record}
echo "$(basename "$0") $*" >> ${record}
export TF_STANDIN_STATE=${record}.tfstate
cmd="$1"; shift
case "$cmd" in
  init) echo "Initializing the backend..."; echo "Terraform has been successfully initialized!" ;;
  workspace)
    if [ "$1" = list ]; then [ -f hang ] && exec sleep 98765; echo "* default"; else echo "Switched to workspace \\"$3\\"."; fi ;;
esac
${terraformCommands}
`;

/** A resource change of a plan's JSON (Terraform's documented format). */
const change = (address: string, actions: string[], parts: Record<string, unknown>) => {
  const [type, name] = address.split('.');
  return {
    address,
    mode: 'managed',
    type,
    name,
    provider_name: 'registry.terraform.io/hashicorp/null',
    change: { actions, ...parts },
  };
};

/** The secret a plan's sensitive attribute holds: it must never leave the run. */
export const PLAN_SECRET = 'pl4n-s3cret-h0ld3r';

/**
 * A plan's JSON with every action: create, update, delete, replace in both orders, no-op and read, a sensitive
 * attribute (`password`, holding PLAN_SECRET before and after a change) and one resource drifted.
 */
export const everyActionPlan = {
  format_version: '1.2',
  terraform_version: '1.9.5',
  resource_drift: [
    change('aws_s3_bucket.logs', ['update'], { before: { tags: { a: '1' } }, after: { tags: { a: '2' } } }),
  ],
  resource_changes: [
    change('aws_instance.web', ['create'], {
      before: null,
      after: { ami: 'ami-1', instance_type: 't3.micro' },
      after_unknown: { id: true, arn: true },
      before_sensitive: false,
      after_sensitive: {},
    }),
    change('aws_db_instance.main', ['update'], {
      before: { password: `${PLAN_SECRET}-old`, instance_class: 'db.t3.small', name: 'main' },
      after: { password: PLAN_SECRET, instance_class: 'db.t3.medium', name: 'main' },
      after_unknown: {},
      before_sensitive: { password: true },
      after_sensitive: { password: true },
    }),
    change('aws_security_group.old', ['delete'], {
      before: { name: 'old', description: 'legacy' },
      after: null,
      before_sensitive: {},
      after_sensitive: false,
    }),
    change('aws_instance.db', ['delete', 'create'], {
      before: { ami: 'ami-1', user_data: PLAN_SECRET },
      after: { ami: 'ami-2', user_data: PLAN_SECRET },
      after_unknown: { id: true },
      before_sensitive: { user_data: true },
      after_sensitive: { user_data: true },
    }),
    change('aws_lb.front', ['create', 'delete'], {
      before: { name: 'front', subnets: ['a'] },
      after: { name: 'front', subnets: ['a', 'b'] },
      after_unknown: {},
      before_sensitive: {},
      after_sensitive: {},
    }),
    change('null_resource.same', ['no-op'], {
      before: { id: '1' },
      after: { id: '1' },
      before_sensitive: {},
      after_sensitive: {},
    }),
    {
      ...change('data.aws_ami.latest', ['read'], {
        before: null,
        after: { most_recent: true },
        after_unknown: { id: true },
        before_sensitive: false,
        after_sensitive: {},
      }),
      mode: 'data',
    },
  ],
};

/** The lock holder a stand-in's `locked` file names. */
export const LOCK_HOLDER = 'alice@build-host';
