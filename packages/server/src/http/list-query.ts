import { z } from 'zod';

/**
 * `?sort=&order=` of the list routes (Semaphore's clients send them). Unknown values fall back to the default
 * order instead of failing: a list is always answerable.
 */
export function listQuery<const S extends readonly [string, ...string[]]>(sortable: S) {
  return z
    .object({
      sort: z.enum(sortable).catch(sortable[0]),
      order: z.enum(['asc', 'desc']).catch('asc'),
    })
    .catch({ sort: sortable[0], order: 'asc' as const });
}
