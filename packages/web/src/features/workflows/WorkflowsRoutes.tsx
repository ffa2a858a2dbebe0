import { lazy } from 'react';
import { Route, Routes } from 'react-router';

const WorkflowsPage = lazy(() => import('./WorkflowsPage'));
const WorkflowEditorPage = lazy(() => import('./editor/WorkflowEditorPage'));
const RunsPage = lazy(() => import('./run/RunsPage'));

/** /project/{id}/workflows/*: the list, a workflow's editor (`new` for a new one) and its runs. */
export default function WorkflowsRoutes() {
  return (
    <Routes>
      <Route index element={<WorkflowsPage />} />
      <Route path=":workflowId" element={<WorkflowEditorPage />} />
      <Route path=":workflowId/runs" element={<RunsPage />} />
    </Routes>
  );
}
