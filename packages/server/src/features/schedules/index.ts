// The schedules feature as other features may use it: everything else of it is its own.
export { cronError } from './cron';
export {
  assertCron,
  assertSameProject,
  recordScheduleEvent,
  refreshScheduler,
  unanswerableSurvey,
} from './schedules.service';
export {
  commitCheckSchedules,
  commitCheckSchedulesOf,
  DRIFT_SCHEDULE,
  deleteSchedule,
  driftSchedule,
  findSchedule,
  formSchedule,
  insertSchedule,
  listSchedules,
  projectCommitChecks,
  updateSchedule,
} from './schedules.store';
