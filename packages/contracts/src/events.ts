import { z } from 'zod';

/** One entry of the activity log, as GET events and GET project/{id}/events list it (newest first). */
export const eventSchema = z.strictObject({
  id: z.number().int(),
  project_id: z
    .number()
    .int()
    .nullable()
    .describe('The project the event belongs to; null: not of a project.'),
  user_id: z
    .number()
    .int()
    .nullable()
    .describe('The user who acted; null: the server itself (a task no user started, task retention).'),
  object_id: z
    .number()
    .int()
    .nullable()
    .describe('The id of the object acted on, of the kind `object_type` names; null: no single object.'),
  object_type: z.string().describe('The kind of object acted on (task, template, user…); may be empty.'),
  description: z.string(),
  created: z.string().describe('When it happened (ISO 8601).'),
  username: z
    .string()
    .nullable()
    .describe("The acting user's username; null when there is none or it was deleted."),
  user_name: z
    .string()
    .nullable()
    .describe("The acting user's name; null when there is none or it was deleted."),
  project_name: z
    .string()
    .nullable()
    .describe("The project's name; null when not of a project or it was deleted."),
});
export type EventView = z.infer<typeof eventSchema>;
