import { Navigate, Route, Routes, useParams } from 'react-router';
import { useProjectContext } from '../../app/project-context';
import { TemplateDetail } from './TemplateDetail';
import { TemplateFormPage } from './TemplateForm';
import TemplatesPage from './TemplatesPage';

function Detail({ listPath }: { listPath: string }) {
  const id = useParams().templateId;
  if (id === 'new') return <Navigate to={`${listPath}/new/edit`} replace />;
  return <TemplateDetail key={id} templateId={Number(id)} listPath={listPath} />;
}

function Edit({ listPath }: { listPath: string }) {
  const id = useParams().templateId;
  return <TemplateFormPage templateId={Number(id) || null} listPath={listPath} />;
}

/** Everything under templates/* and views/{viewId}/templates/*. */
export default function TemplatesRoutes() {
  const { project } = useProjectContext();
  const viewId = Number(useParams().viewId) || null;
  const listPath = viewId
    ? `/project/${project.id}/views/${viewId}/templates`
    : `/project/${project.id}/templates`;
  return (
    <Routes>
      <Route index element={<TemplatesPage />} />
      <Route path="new/edit" element={<TemplateFormPage key="new" templateId={null} listPath={listPath} />} />
      <Route path=":templateId" element={<Detail listPath={listPath} />} />
      <Route path=":templateId/edit" element={<Edit listPath={listPath} />} />
      <Route path="*" element={<Navigate to={listPath} replace />} />
    </Routes>
  );
}
