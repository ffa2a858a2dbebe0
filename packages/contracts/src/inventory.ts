import { z } from 'zod';
import { optionalId, requiredString } from './common';
import { issue } from './errors';
import { runnerTagField } from './runners';

export const inventoryTypes = [
  'static',
  'static-yaml',
  'file',
  'terraform-workspace',
  'tofu-workspace',
  'terragrunt-workspace',
] as const;
export type InventoryType = (typeof inventoryTypes)[number];

export const workspaceInventoryTypes = [
  'terraform-workspace',
  'tofu-workspace',
  'terragrunt-workspace',
] as const;
export const isWorkspaceInventory = (type: string) =>
  (workspaceInventoryTypes as readonly string[]).includes(type);

/** An inventory as the API answers it. */
export const inventorySchema = z.strictObject({
  id: z.int(),
  name: z.string(),
  project_id: z.int(),
  type: z.enum(inventoryTypes),
  inventory: z.string().describe('Static content, a file path, or a workspace name, by type.'),
  ssh_key_id: z.int().nullable().describe('User credentials: the access key Ansible connects to hosts with.'),
  become_key_id: z.int().nullable().describe('Sudo credentials: the access key privileges are raised with.'),
  repository_id: z
    .int()
    .nullable()
    .describe("The repository a file inventory's path is read from; null: the template's repository."),
  runner_tag: z
    .string()
    .nullable()
    .describe('Tasks run with this inventory run only on a remote runner carrying this tag; null: any.'),
});
export type Inventory = z.infer<typeof inventorySchema>;

export const INVENTORY_MAX = 500_000;

/**
 * A Terraform/OpenTofu/Terragrunt workspace name reaches the command line, so it keeps to a conservative character set and
 * never starts with "-" (it would read as an option) or ".".
 */
export const isWorkspaceName = (name: string) => /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,89}$/.test(name);

export const inventoryInput = z
  .object({
    id: optionalId(),
    project_id: optionalId(),
    name: requiredString(255),
    type: z.enum(inventoryTypes),
    inventory: z
      .string()
      .max(INVENTORY_MAX)
      .nullish()
      .transform((v) => v ?? ''),
    ssh_key_id: optionalId(),
    become_key_id: optionalId(),
    repository_id: optionalId(),
    runner_tag: runnerTagField,
  })
  .superRefine((input, ctx) => {
    const workspace = isWorkspaceInventory(input.type);
    // Workspace inventories run with the project's None key, which the server picks.
    if (!workspace && !input.ssh_key_id)
      ctx.addIssue({ code: 'custom', message: issue('required'), path: ['ssh_key_id'] });
    if (input.type === 'file' && input.inventory.trim() === '')
      ctx.addIssue({ code: 'custom', message: issue('required'), path: ['inventory'] });
    if (workspace && input.inventory.trim() === '')
      ctx.addIssue({ code: 'custom', message: issue('required'), path: ['inventory'] });
    else if (workspace && !isWorkspaceName(input.inventory.trim()))
      ctx.addIssue({ code: 'custom', message: issue('workspace_name'), path: ['inventory'] });
  })
  .transform((input) =>
    input.type === 'file' || isWorkspaceInventory(input.type)
      ? { ...input, inventory: input.inventory.trim() }
      : input,
  );
export type InventoryInput = z.output<typeof inventoryInput>;
