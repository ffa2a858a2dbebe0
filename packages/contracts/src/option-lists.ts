import { z } from 'zod';
import { requiredString } from './common';
import { issue } from './errors';

/** The most entries one option list holds. */
export const OPTION_LIST_MAX_ENTRIES = 1000;

/** One entry of an option list: `name` is the label a form shows, `value` the answer it gives. */
export const optionListEntrySchema = z.strictObject({
  name: z.string().describe('The label a form shows.'),
  value: z.string().describe('The answer choosing it gives.'),
});
export type OptionListEntry = z.infer<typeof optionListEntrySchema>;

/**
 * An option list: a named list of options of a project, which a survey's choice variable may offer (its
 * `options_source` of type `option_list`).
 */
export const optionListSchema = z.strictObject({
  id: z.number().int(),
  project_id: z.number().int(),
  name: z.string(),
  options: z.array(optionListEntrySchema),
});
export type OptionList = z.infer<typeof optionListSchema>;

const entryInput = z.object({
  name: requiredString(255),
  value: z.string().max(1000),
});

/** Body of POST option_lists and PUT option_lists/{id}. Values are unique within the list. */
export const optionListInput = z.object({
  id: z.number().int().nullish(),
  project_id: z.number().int().nullish(),
  name: requiredString(100),
  options: z
    .array(entryInput)
    .max(OPTION_LIST_MAX_ENTRIES)
    .nullish()
    .transform((v) => v ?? [])
    .superRefine((options, ctx) => {
      if (new Set(options.map((o) => o.value)).size !== options.length)
        ctx.addIssue({ code: 'custom', message: issue('option_values_unique') });
    }),
});
export type OptionListInput = z.infer<typeof optionListInput>;
