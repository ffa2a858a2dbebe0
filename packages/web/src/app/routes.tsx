import { lazy, Suspense } from 'react';
import { Route, Routes } from 'react-router';
import { Spinner } from '../components/states';

const LoginPage = lazy(() => import('../features/auth/LoginPage'));
const SessionRoot = lazy(() => import('./SessionRoot'));

/** Top level: the sign-in page needs no session; everything else loads the session first. */
export function AppRoutes() {
  return (
    <Suspense fallback={<Spinner />}>
      <Routes>
        <Route path="/auth/login" element={<LoginPage />} />
        <Route path="*" element={<SessionRoot />} />
      </Routes>
    </Suspense>
  );
}
