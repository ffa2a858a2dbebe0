import { refsSchema } from '@signalbox/contracts';
import { pathIds } from './path-params';

/** `GET …/:id/refs`: the objects that use the resource of the path (documented by the contract's schema). */
export const refsRoute = { schema: { params: pathIds('id'), response: { 200: refsSchema } } };
