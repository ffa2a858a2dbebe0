// What other parts of the console use of workflows: the approvals inbox and the dialog answering an approval node.
export { useApprovalInbox } from './api';
export { ApprovalDialog, type ApprovalTarget } from './run/ApprovalDialog';
