import type { ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { Navigate, Route, Routes, useParams } from 'react-router';
import { NotAllowed } from '../../components/access';
import { useProjectContext } from '../../components/project-context';
import { TemplateDetail } from './TemplateDetail';
import { TemplateFormPage } from './TemplateForm';
import TemplatesPage from './TemplatesPage';

function Detail({ listPath }: { listPath: string }) {
  const id = useParams().templateId;
  if (id === 'new') return <Navigate to={`${listPath}/new/edit`} replace />;
  return <TemplateDetail key={id} templateId={Number(id)} listPath={listPath} />;
}

/**
 * The template form only for roles that may save it (manageProjectResources); any other role is told it cannot
 * edit (or create) templates, with a way back, rather than shown a form the server would refuse.
 */
function MayEdit({
  templateId,
  listPath,
  children,
}: {
  templateId: number | null;
  listPath: string;
  children: ReactNode;
}) {
  const { t } = useTranslation();
  const { can } = useProjectContext();
  if (can('manageProjectResources')) return children;
  return templateId ? (
    <NotAllowed
      title={t('access.cannotEditTemplate')}
      permission="manageProjectResources"
      backTo={`${listPath}/${templateId}`}
      backLabel={t('access.openTemplate')}
    />
  ) : (
    <NotAllowed
      title={t('access.cannotCreateTemplate')}
      permission="manageProjectResources"
      backTo={listPath}
      backLabel={t('access.backToTemplates')}
    />
  );
}

function Edit({ listPath }: { listPath: string }) {
  const id = Number(useParams().templateId) || null;
  return (
    <MayEdit templateId={id} listPath={listPath}>
      <TemplateFormPage templateId={id} listPath={listPath} />
    </MayEdit>
  );
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
      <Route
        path="new/edit"
        element={
          <MayEdit templateId={null} listPath={listPath}>
            <TemplateFormPage key="new" templateId={null} listPath={listPath} />
          </MayEdit>
        }
      />
      <Route path=":templateId" element={<Detail listPath={listPath} />} />
      <Route path=":templateId/edit" element={<Edit listPath={listPath} />} />
      <Route path="*" element={<Navigate to={listPath} replace />} />
    </Routes>
  );
}
