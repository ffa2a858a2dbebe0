// What other features use of the activity feature.
export { EventLog } from './EventLog';
