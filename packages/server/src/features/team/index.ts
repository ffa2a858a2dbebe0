// The team feature as other features may use it: everything else of it is its own.
export { claimEmailInvites } from './invites.store';
export {
  countOwners,
  deleteMember,
  findMember,
  findUserAdmin,
  insertMember,
  listMembers,
  memberProjects,
  updateMemberRole,
} from './team.store';
