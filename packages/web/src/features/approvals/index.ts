// What the shell uses of approvals: the badge counting what waits for the signed-in user.
export { ApprovalsBadge } from './ApprovalsBadge';
