import { z } from 'zod';
import { requiredString } from './common';
import { issue } from './errors';

/** A view: a named tab grouping templates, ordered by position. */
export const viewSchema = z.strictObject({
  id: z.number().int(),
  project_id: z.number().int(),
  title: z.string(),
  position: z.number().int(),
});
export type View = z.infer<typeof viewSchema>;

export const VIEW_POSITION_MAX = 1_000_000;

const viewPosition = z.number().int().min(0).max(VIEW_POSITION_MAX);

/** Body of POST views and PUT views/{id}. Without a position a new view goes last. */
export const viewInput = z.object({
  project_id: z.number().int().nullish(),
  title: requiredString(100),
  position: viewPosition.nullish().transform((v) => v ?? null),
});
export type ViewInput = z.infer<typeof viewInput>;

/** Body of POST views/positions: a map of view id to position, e.g. {"3": 0, "5": 1}. */
export const viewPositionsInput = z
  .record(z.string().max(12), viewPosition)
  .superRefine((map, ctx) => {
    const keys = Object.keys(map);
    if (keys.length > 1000) ctx.addIssue({ code: 'custom', message: issue('too_many', { max: 1000 }) });
    for (const key of keys) {
      if (!/^[1-9]\d{0,9}$/.test(key) || Number(key) > 2_147_483_647)
        ctx.addIssue({ code: 'custom', message: issue('view_id_not_positive', { id: key }), path: [key] });
    }
  })
  .transform((map) => Object.entries(map).map(([id, position]) => ({ id: Number(id), position })));
export type ViewPositionsInput = z.infer<typeof viewPositionsInput>;
