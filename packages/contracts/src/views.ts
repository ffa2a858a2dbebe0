import { z } from 'zod';
import { requiredString } from './common';

/** A view: a named tab grouping templates, ordered by position. */
export const viewSchema = z.strictObject({
  id: z.number().int(),
  project_id: z.number().int(),
  title: z.string(),
  position: z.number().int(),
});
export type View = z.infer<typeof viewSchema>;

export const VIEW_POSITION_MAX = 1_000_000;

const viewPosition = z
  .number({ error: 'Position must be a number' })
  .int('Position must be an integer')
  .min(0, 'Position must be 0 or greater')
  .max(VIEW_POSITION_MAX, `Position must be at most ${VIEW_POSITION_MAX}`);

/** Body of POST views and PUT views/{id}. Without a position a new view goes last. */
export const viewInput = z.object({
  project_id: z.number({ error: 'Project ID must be a number' }).int().nullish(),
  title: requiredString('Title', 100),
  position: viewPosition.nullish().transform((v) => v ?? null),
});
export type ViewInput = z.infer<typeof viewInput>;

/** Body of POST views/positions: a map of view id to position, e.g. {"3": 0, "5": 1}. */
export const viewPositionsInput = z
  .record(z.string().max(12, 'View id is too long'), viewPosition, {
    error: 'Positions must be an object of view id to position',
  })
  .superRefine((map, ctx) => {
    const keys = Object.keys(map);
    if (keys.length > 1000) ctx.addIssue({ code: 'custom', message: 'Too many views' });
    for (const key of keys) {
      if (!/^[1-9]\d{0,9}$/.test(key) || Number(key) > 2_147_483_647)
        ctx.addIssue({ code: 'custom', message: `View id ${key} must be a positive integer`, path: [key] });
    }
  })
  .transform((map) => Object.entries(map).map(([id, position]) => ({ id: Number(id), position })));
export type ViewPositionsInput = z.infer<typeof viewPositionsInput>;
