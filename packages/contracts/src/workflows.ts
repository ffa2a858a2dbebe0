import { z } from 'zod';
import { flag, id, optionalString, requiredString } from './common';
import { issue } from './errors';
import { projectRoles } from './permissions';
import { surveyVarSchema, templateSurveyVarSchema } from './surveys';

/**
 * Workflows: a project's directed acyclic graph of nodes — a template node runs one of the project's templates as an
 * ordinary task, an approval node waits for people, a delay node waits a while — joined by edges that carry a
 * condition. A node with several incoming edges waits for all of its parents (a join) and runs only when every
 * incoming edge's condition holds; otherwise it is skipped, and its own successors with it. Several outgoing edges
 * run in parallel.
 */

/** The kinds of node. */
export const workflowNodeTypes = ['template', 'approval', 'delay'] as const;
export type WorkflowNodeType = (typeof workflowNodeTypes)[number];

/**
 * When an edge is taken: `success` when its source node succeeded, `failure` when it failed (a failed task, an
 * approval that was rejected or timed out with `fail`), `always` when it ended either way. A skipped or stopped node
 * takes no edge.
 */
export const workflowEdgeConditions = ['success', 'failure', 'always'] as const;
export type WorkflowEdgeCondition = (typeof workflowEdgeConditions)[number];

/** Most nodes, edges and survey variables a workflow may have. */
export const WORKFLOW_MAX_NODES = 200;
export const WORKFLOW_MAX_EDGES = 1000;
/** The longest delay and approval timeout: 30 days. */
export const WORKFLOW_MAX_WAIT_SECONDS = 30 * 24 * 3600;

/** A node's id within its workflow: a short name the edges and mappings refer to (letters, digits, _ and -). */
export const WORKFLOW_NODE_ID = /^[A-Za-z0-9_-]{1,64}$/;
export const workflowNodeId = z
  .string()
  .regex(WORKFLOW_NODE_ID, issue('workflow_node_id_format'))
  .describe('The node id within the workflow: 1-64 letters, digits, "_" or "-".');

/** A fixed JSON value a mapping gives (bounded: at most 10,000 characters as JSON). */
const fixedValue = z
  .union([
    z.string().max(10_000),
    z.number(),
    z.boolean(),
    z.null(),
    z.array(z.unknown()).max(1000),
    z.record(z.string().max(100), z.unknown()),
  ])
  .refine((v) => JSON.stringify(v ?? null).length <= 10_000, issue('too_big_json'));

/**
 * Where a value a node runs with comes from:
 * - `fixed`: the value given here;
 * - `survey`: the answer to the workflow survey's variable `name` (a secret variable stays secret);
 * - `output`: the output `name` of the upstream template node `node` (it must run before this node, i.e. be an
 *   ancestor in the graph). Every template node also has the outputs `task_id`, `version`, `commit_hash` and
 *   `status` of the task it ran. A secret output stays secret: it reaches the task as a secret value (encrypted,
 *   masked in the log), never as plain extra variables.
 */
export const workflowValueSourceSchema = z.discriminatedUnion(
  'from',
  [
    z.strictObject({ from: z.literal('fixed'), value: fixedValue }),
    z.strictObject({ from: z.literal('survey'), name: requiredString(100) }),
    z.strictObject({ from: z.literal('output'), node: workflowNodeId, name: requiredString(100) }),
  ],
  { error: issue('workflow_value_source') },
);
export type WorkflowValueSource = z.infer<typeof workflowValueSourceSchema>;

/** Named values (survey answers, extra variables) a template node runs with, each from its source. */
const valueMap = z
  .record(z.string().min(1).max(100), workflowValueSourceSchema)
  .refine((v) => Object.keys(v).length <= 100, issue('too_many', { max: 100 }))
  .nullish()
  .transform((v) => v ?? {});

const optionalSource = workflowValueSourceSchema.nullish().transform((v) => v ?? null);

/** Where the editor draws a node; not used by the engine. */
const position = z
  .strictObject({ x: z.number().min(-1e6).max(1e6), y: z.number().min(-1e6).max(1e6) })
  .nullish()
  .transform((v) => v ?? null);

const nodeBase = {
  id: workflowNodeId,
  name: optionalString(100).describe('What the graph shows; the node id when empty.'),
  position,
};

/**
 * A template node: runs the project's template `template_id` as an ordinary task (queue rules, runner tags, live
 * log, alerts and history as any task). `survey` answers the template's survey by variable name, `extra_vars` adds
 * extra variables; `limit`, `git_branch`, `inventory_id`, `environment_id` (a project environment: its variables
 * and secrets; the template must allow the override) and `build_task_id` (the build a deploy template deploys: e.g.
 * the `task_id` output of the build node) override the template's, each fixed or mapped.
 */
export const workflowTemplateNodeInput = z.strictObject({
  ...nodeBase,
  type: z.literal('template'),
  template_id: id(),
  survey: valueMap,
  extra_vars: valueMap,
  limit: optionalSource,
  git_branch: optionalSource,
  inventory_id: optionalSource,
  environment_id: optionalSource,
  build_task_id: optionalSource,
  message: optionalString(500).describe('The message of the task it starts; the run message when empty.'),
});

/** What an approval node does when nobody decided within its timeout: fail the node, or skip it (and its successors). */
export const workflowApprovalTimeoutActions = ['fail', 'skip'] as const;

/**
 * An approval node: waits until `required` people allowed to approve it approved it. Allowed are the project members
 * whose role is in `roles` and the members named in `user_ids`; the person who started the run only when
 * `allow_self_approval`. Anyone allowed may reject it instead, with a reason (the node ends `rejected`). After
 * `timeout_seconds` (null: never) the node fails or is skipped, as `on_timeout` says.
 */
export const workflowApprovalNodeInput = z.strictObject({
  ...nodeBase,
  type: z.literal('approval'),
  roles: z
    .array(z.enum(projectRoles))
    .max(4)
    .nullish()
    .transform((v) => [...new Set(v ?? ['owner', 'manager'])]),
  user_ids: z
    .array(id())
    .max(100)
    .nullish()
    .transform((v) => [...new Set(v ?? [])]),
  required: z
    .number()
    .int()
    .min(1)
    .max(20)
    .nullish()
    .transform((v) => v ?? 1),
  allow_self_approval: flag(),
  message: optionalString(2000).describe('What the approvers are told.'),
  timeout_seconds: z
    .number()
    .int()
    .min(1)
    .max(WORKFLOW_MAX_WAIT_SECONDS)
    .nullish()
    .transform((v) => v ?? null),
  on_timeout: z
    .enum(workflowApprovalTimeoutActions)
    .nullish()
    .transform((v) => v ?? 'fail'),
});

/** A delay node: waits `seconds`, or until the next `time_of_day` (HH:MM, 24 h) in `timezone` (IANA, default UTC). */
export const workflowDelayNodeInput = z.strictObject({
  ...nodeBase,
  type: z.literal('delay'),
  seconds: z
    .number()
    .int()
    .min(0)
    .max(WORKFLOW_MAX_WAIT_SECONDS)
    .nullish()
    .transform((v) => v ?? null),
  time_of_day: z
    .string()
    .regex(/^([01]\d|2[0-3]):[0-5]\d$/, issue('workflow_time_of_day'))
    .nullish()
    .transform((v) => v ?? null),
  timezone: z
    .string()
    .max(64)
    .nullish()
    .transform((v) => v || 'UTC'),
});

export const workflowNodeInput = z.discriminatedUnion(
  'type',
  [workflowTemplateNodeInput, workflowApprovalNodeInput, workflowDelayNodeInput],
  { error: issue('workflow_node_type') },
);
export type WorkflowNodeInput = z.input<typeof workflowNodeInput>;
export type WorkflowNode = z.output<typeof workflowNodeInput>;
export type WorkflowTemplateNode = z.output<typeof workflowTemplateNodeInput>;
export type WorkflowApprovalNode = z.output<typeof workflowApprovalNodeInput>;
export type WorkflowDelayNode = z.output<typeof workflowDelayNodeInput>;

export const workflowEdgeInput = z.strictObject({
  from: workflowNodeId,
  to: workflowNodeId,
  condition: z
    .string()
    .nullish()
    .transform((v) => v ?? 'success')
    .refine((v) => (workflowEdgeConditions as readonly string[]).includes(v), {
      message: issue('workflow_edge_condition', { options: workflowEdgeConditions.join(', ') }),
    })
    .transform((v) => v as WorkflowEdgeCondition),
});
export type WorkflowEdge = z.output<typeof workflowEdgeInput>;

/**
 * Body of POST workflows and PUT workflows/{id}. The schema checks each field; the server checks the graph (node ids
 * unique, edges between known nodes, no cycle, no node that can never run, conditions that can hold, templates and
 * approvers of this project, mappings from ancestors and known survey variables) and answers 400 with a code naming
 * the problem.
 */
export const workflowInput = z.object(
  {
    name: requiredString(100),
    description: optionalString(10_000),
    survey_vars: z
      .array(surveyVarSchema)
      .max(100)
      .nullish()
      .transform((v) => v ?? []),
    nodes: z.array(workflowNodeInput).min(1).max(WORKFLOW_MAX_NODES),
    edges: z
      .array(workflowEdgeInput)
      .max(WORKFLOW_MAX_EDGES)
      .nullish()
      .transform((v) => v ?? []),
    id: z.unknown().optional(),
    project_id: z.unknown().optional(),
  },
  { error: issue('body_not_object') },
);
export type WorkflowInput = z.output<typeof workflowInput>;

/** The definition part of a workflow (what a run keeps a copy of). */
export type WorkflowDefinition = Pick<WorkflowInput, 'survey_vars' | 'nodes' | 'edges'>;

const time = (what: string) => z.string().describe(`${what} (ISO 8601, UTC)`);

const valueSourceView = z.union([
  z.strictObject({ from: z.literal('fixed'), value: z.unknown() }),
  z.strictObject({ from: z.literal('survey'), name: z.string() }),
  z.strictObject({ from: z.literal('output'), node: z.string(), name: z.string() }),
]);
const nodePosition = z.strictObject({ x: z.number(), y: z.number() }).nullable();

export const workflowNodeSchema = z.discriminatedUnion('type', [
  z.strictObject({
    id: z.string(),
    name: z.string(),
    position: nodePosition,
    type: z.literal('template'),
    template_id: z.number().int(),
    survey: z.record(z.string(), valueSourceView),
    extra_vars: z.record(z.string(), valueSourceView),
    limit: valueSourceView.nullable(),
    git_branch: valueSourceView.nullable(),
    inventory_id: valueSourceView.nullable(),
    environment_id: valueSourceView.nullable(),
    build_task_id: valueSourceView.nullable(),
    message: z.string(),
  }),
  z.strictObject({
    id: z.string(),
    name: z.string(),
    position: nodePosition,
    type: z.literal('approval'),
    roles: z.array(z.enum(projectRoles)),
    user_ids: z.array(z.number().int()),
    required: z.number().int(),
    allow_self_approval: z.boolean(),
    message: z.string(),
    timeout_seconds: z.number().int().nullable(),
    on_timeout: z.enum(workflowApprovalTimeoutActions),
  }),
  z.strictObject({
    id: z.string(),
    name: z.string(),
    position: nodePosition,
    type: z.literal('delay'),
    seconds: z.number().int().nullable(),
    time_of_day: z.string().nullable(),
    timezone: z.string(),
  }),
]);

export const workflowEdgeSchema = z.strictObject({
  from: z.string(),
  to: z.string(),
  condition: z.enum(workflowEdgeConditions),
});

/** A workflow as the API answers it. */
export const workflowSchema = z.strictObject({
  id: z.number().int(),
  project_id: z.number().int(),
  name: z.string(),
  description: z.string(),
  survey_vars: z.array(templateSurveyVarSchema),
  nodes: z.array(workflowNodeSchema),
  edges: z.array(workflowEdgeSchema),
  created: time('When the workflow was created'),
  updated: time('When the workflow was last changed'),
  last_run: z
    .strictObject({ id: z.number().int(), status: z.string(), created: z.string() })
    .nullable()
    .describe('The latest run of the workflow; null: never run.'),
});
export type Workflow = z.infer<typeof workflowSchema>;

/** A run's states. `waiting`: created, no node started yet. */
export const workflowRunStatuses = [
  'waiting',
  'running',
  'waiting_approval',
  'success',
  'failed',
  'stopped',
  'rejected',
] as const;
export type WorkflowRunStatus = (typeof workflowRunStatuses)[number];
export const finishedWorkflowRunStatuses: readonly WorkflowRunStatus[] = [
  'success',
  'failed',
  'stopped',
  'rejected',
];

/**
 * A node's states in a run: `pending` (not reached yet), `running` (its task runs, or its delay counts down),
 * `waiting_approval`, and the ends `success`, `failed`, `rejected` (an approver rejected it), `skipped` (an incoming
 * edge's condition did not hold, or an approval timed out with `skip`) and `stopped` (the run was stopped).
 */
export const workflowNodeStatuses = [
  'pending',
  'running',
  'waiting_approval',
  'success',
  'failed',
  'rejected',
  'skipped',
  'stopped',
] as const;
export type WorkflowNodeStatus = (typeof workflowNodeStatuses)[number];
export const finishedWorkflowNodeStatuses: readonly WorkflowNodeStatus[] = [
  'success',
  'failed',
  'rejected',
  'skipped',
  'stopped',
];

/**
 * How a run was started: from the console (`ui`), with an API token (`api`), by a schedule, an integration, an AI
 * agent (`mcp`), or by a node of another workflow (`workflow`).
 */
export const workflowRunSources = ['ui', 'api', 'schedule', 'integration', 'mcp', 'workflow'] as const;
export type WorkflowRunSource = (typeof workflowRunSources)[number];

/** One person's answer to an approval node. */
export const workflowApprovalSchema = z.strictObject({
  id: z.number().int(),
  node_id: z.string(),
  user_id: z.number().int(),
  user_name: z.string().nullable().describe("The approver's name; null once the user was deleted."),
  decision: z.enum(['approved', 'rejected']),
  reason: z.string().describe('Why it was rejected (or a remark); empty when none.'),
  digest: z.string().describe('The SHA-256 digest (hex) of the inputs the approver saw.'),
  valid: z
    .boolean()
    .describe(
      "Whether the answer still counts: false once the node's inputs changed after it (e.g. an upstream node ran again).",
    ),
  created: time('When it was given'),
});
export type WorkflowApproval = z.infer<typeof workflowApprovalSchema>;

/** The inputs of a template node an approval shows: the values each field of it takes. */
export const workflowInputFields = [
  'survey',
  'extra_vars',
  'limit',
  'git_branch',
  'inventory_id',
  'environment_id',
  'build_task_id',
] as const;

/**
 * One value a template node after an approval node will run with, as the approvers review it. `state`: `value` (known
 * now: `value` holds it, or the mask when `secret`), `pending` (an output of a node that has not run yet) or
 * `missing` (a survey answer not given: the template's own value applies). Secret values — secret survey answers,
 * secret outputs, answers to the template's secret variables — are never answered: `value` is '**********'.
 */
export const workflowApprovalInputSchema = z.strictObject({
  node_id: z.string().describe('The template node that runs with it.'),
  node_name: z.string(),
  template_id: z.number().int(),
  field: z.enum(workflowInputFields),
  name: z
    .string()
    .nullable()
    .describe('The variable, for survey answers and extra variables; null otherwise.'),
  source: valueSourceView,
  state: z.enum(['value', 'pending', 'missing']),
  value: z.unknown().describe("The value; '**********' when secret; null unless state is value."),
  secret: z.boolean(),
  label: z
    .string()
    .nullable()
    .describe('What an id names: the inventory or environment (its name), for the console; null otherwise.'),
});
export type WorkflowApprovalInput = z.infer<typeof workflowApprovalInputSchema>;

/** A node's state in a run. */
export const workflowRunNodeSchema = z.strictObject({
  node_id: z.string(),
  type: z.enum(workflowNodeTypes),
  status: z.enum(workflowNodeStatuses),
  attempt: z.number().int().describe('How many times the node was started in this run (a re-run adds one).'),
  task_id: z.number().int().nullable().describe('The task a template node started (its latest attempt).'),
  start: time('When the node started').nullable(),
  end: time('When the node ended').nullable(),
  wait_until: time('When a delay ends or an approval times out').nullable(),
  detail: z
    .string()
    .nullable()
    .describe('Why it ended as it did (a rejection reason, a timeout), in English.'),
  input_digest: z
    .string()
    .nullable()
    .describe(
      'Approval nodes: the SHA-256 digest (hex) of the inputs the next nodes will run with (upstream outputs and commits, survey answers); an approval must name it.',
    ),
  approvals_required: z.number().int().nullable().describe('Approval nodes: how many approvals it needs.'),
  approvals_given: z.number().int().nullable().describe('Approval nodes: how many valid approvals it has.'),
  inputs: z
    .array(workflowApprovalInputSchema)
    .nullable()
    .describe(
      'Approval nodes that waited or wait for approval: the values the template nodes after it run with (what ' +
        '`input_digest` binds an approval to), secret ones masked; null for other nodes, and in run lists.',
    ),
});
export type WorkflowRunNode = z.infer<typeof workflowRunNodeSchema>;

/** A run of a workflow as the API answers it. */
export const workflowRunSchema = z.strictObject({
  id: z.number().int(),
  project_id: z.number().int(),
  workflow_id: z.number().int(),
  workflow_name: z.string(),
  status: z.enum(workflowRunStatuses),
  source: z.enum(workflowRunSources),
  message: z.string(),
  user_id: z.number().int().nullable().describe('Who started the run; null when no user did.'),
  user_name: z.string().nullable(),
  schedule_id: z.number().int().nullable(),
  integration_id: z.number().int().nullable(),
  parent_run_id: z.number().int().nullable().describe('The run whose node started this one; null: none.'),
  created: time('When the run was created'),
  start: time('When its first node started').nullable(),
  end: time('When it ended').nullable(),
  survey: z
    .record(z.string(), z.unknown())
    .describe("The workflow survey's answers; secret answers are shown as '**********'."),
  nodes: z.array(workflowNodeSchema).describe('The definition the run runs (a copy taken when it started).'),
  edges: z.array(workflowEdgeSchema),
  node_states: z.array(workflowRunNodeSchema),
  approvals: z.array(workflowApprovalSchema),
});
export type WorkflowRun = z.infer<typeof workflowRunSchema>;

/** A run as the run lists answer it: without the definition and the approvals. */
export const workflowRunSummarySchema = workflowRunSchema.omit({
  nodes: true,
  edges: true,
  approvals: true,
  survey: true,
});
export type WorkflowRunSummary = z.infer<typeof workflowRunSummarySchema>;

/** Body of POST workflows/{id}/runs: the survey answers (secret ones included) and a message. */
export const workflowRunInput = z
  .object(
    {
      message: optionalString(500),
      survey: z
        .record(z.string().max(100), z.unknown())
        .nullish()
        .transform((v) => v ?? {})
        .refine((v) => JSON.stringify(v).length <= 100_000, issue('too_big_json')),
    },
    { error: issue('body_not_object') },
  )
  .nullish()
  .transform((v) => v ?? { message: '', survey: {} });
export type WorkflowRunInput = z.output<typeof workflowRunInput>;

const intQuery = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

/** GET workflow-runs: newest first. */
export const workflowRunListQuery = z.object({
  workflow_id: intQuery(1, 2_147_483_647).optional(),
  status: z.enum(workflowRunStatuses).optional(),
  limit: intQuery(1, 1000).default(100),
  offset: intQuery(0, 1_000_000_000).default(0),
});

/** Body of POST workflow-runs/{id}/rerun: the node the run starts again from (it and what follows it run again). */
export const workflowRerunInput = z.object({ node_id: workflowNodeId }, { error: issue('body_not_object') });

/** Body of POST workflow-runs/{id}/nodes/{node_id}/approve: the digest of the inputs the approver reviewed. */
export const workflowApproveInput = z.object(
  {
    digest: z
      .string()
      .regex(/^[0-9a-f]{64}$/, issue('workflow_digest_format'))
      .describe(
        "The node's `input_digest` as the approver saw it: refused (409) when the inputs changed since.",
      ),
    reason: optionalString(500).describe('A remark kept with the approval.'),
  },
  { error: issue('body_not_object') },
);
/** Body of POST workflow-runs/{id}/nodes/{node_id}/reject: why (required). */
export const workflowRejectInput = z.object(
  { reason: requiredString(500) },
  { error: issue('body_not_object') },
);

/**
 * GET /api/approvals: what waits for the current user across their projects — tasks an AI agent started that wait
 * for approval (in projects where the user may run tasks) and workflow approval nodes the user may approve (not
 * those they already answered, nor their own runs unless the node allows self-approval). Oldest first.
 */
export const approvalInboxItemSchema = z.strictObject({
  kind: z.enum(['task', 'workflow_node']),
  project_id: z.number().int(),
  project_name: z.string(),
  since: time('Since when it waits'),
  message: z.string().describe("The task's message, or the approval node's message to approvers."),
  started_by: z.string().nullable().describe('The name of who started the task or run.'),
  task_id: z.number().int().nullable().describe('kind task: the task waiting for approval.'),
  template_name: z.string().nullable(),
  run_id: z.number().int().nullable().describe('kind workflow_node: the run.'),
  workflow_id: z.number().int().nullable(),
  workflow_name: z.string().nullable(),
  node_id: z.string().nullable(),
  node_name: z.string().nullable(),
  input_digest: z.string().nullable().describe('kind workflow_node: the digest an approval must name.'),
  approvals_required: z.number().int().nullable(),
  approvals_given: z.number().int().nullable(),
  timeout_at: time('When the approval times out').nullable(),
});
export type ApprovalInboxItem = z.infer<typeof approvalInboxItemSchema>;
export const approvalInboxSchema = z.array(approvalInboxItemSchema);

/**
 * The routes, relative to /api/project/{project_id} (the path's project must be the run's or workflow's own:
 * another project's id answers 404). Manager and owner edit workflows; task_runner and above start, stop and re-run
 * runs; approving follows each approval node's rules; every member (guests included) reads.
 */
export const workflowRoutes = {
  list: 'GET /workflows',
  create: 'POST /workflows',
  get: 'GET /workflows/{workflow_id}',
  update: 'PUT /workflows/{workflow_id}',
  remove: 'DELETE /workflows/{workflow_id}',
  start: 'POST /workflows/{workflow_id}/runs',
  runs: 'GET /workflow-runs',
  run: 'GET /workflow-runs/{run_id}',
  stop: 'POST /workflow-runs/{run_id}/stop',
  rerun: 'POST /workflow-runs/{run_id}/rerun',
  approve: 'POST /workflow-runs/{run_id}/nodes/{node_id}/approve',
  reject: 'POST /workflow-runs/{run_id}/nodes/{node_id}/reject',
  /** Not under a project: GET /api/approvals. */
  inbox: 'GET /api/approvals',
} as const;
