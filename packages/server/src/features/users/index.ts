// The users feature as other features may use it: everything else of it is its own.

export type { Actor } from './users.service';
export { event, insertUser, isAdmin } from './users.service';
export { findOtherUserByLogin, findUserByLogin, listUsers, toUser, updateUserRow } from './users.store';
