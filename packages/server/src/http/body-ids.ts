import { coded } from '@signalbox/contracts';
import { fieldError } from '../lib/errors';

/**
 * Clients may repeat `project_id` (and `id` on update) in the body, as Semaphore's do; when they do, they must
 * name the object of the path. Absent values are fine.
 */
export function assertBodyIds(
  body: { id?: number | null; project_id?: number | null },
  projectId: number,
  id?: number,
) {
  if (body.project_id != null && body.project_id !== projectId)
    throw fieldError('project_id', coded('project_id_mismatch'));
  if (id !== undefined && body.id != null && body.id !== id)
    throw fieldError('id', coded('object_id_mismatch'));
}
