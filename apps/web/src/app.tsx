import { Route, Routes } from 'react-router';
import { RequireAuth } from './auth/require-auth.tsx';
import { RequireScope } from './auth/require-scope.tsx';
import { ApiKeysPage } from './pages/api-keys-page.tsx';
import { BatchDetailPage } from './pages/batch-detail-page.tsx';
import { BatchesPage } from './pages/batches-page.tsx';
import { InferenceBatchPage } from './pages/inference-batch-page.tsx';
import { JobDetailPage } from './pages/job-detail-page.tsx';
import { JobsPage } from './pages/jobs-page.tsx';
import { ModelDetailPage } from './pages/model-detail-page.tsx';
import { ModelsPage } from './pages/models-page.tsx';
import { NotFoundPage } from './pages/not-found-page.tsx';
import { OverviewPage } from './pages/overview-page.tsx';
import { PlaygroundPage } from './pages/playground-page.tsx';
import { SignInPage } from './pages/sign-in-page.tsx';
import { UsagePage } from './pages/usage-page.tsx';
import { WorkersPage } from './pages/workers-page.tsx';

// Client routes never start with /v1, /docs, /healthz or /readyz: the API owns those paths on the same origin.
export function App() {
  return (
    <Routes>
      <Route path="/sign-in" element={<SignInPage />} />
      <Route element={<RequireAuth />}>
        <Route
          index
          element={
            <RequireScope scope="jobs:read">
              <OverviewPage />
            </RequireScope>
          }
        />
        <Route
          path="jobs"
          element={
            <RequireScope scope="jobs:read">
              <JobsPage />
            </RequireScope>
          }
        />
        <Route
          path="jobs/:id"
          element={
            <RequireScope scope="jobs:read">
              <JobDetailPage />
            </RequireScope>
          }
        />
        <Route
          path="batches"
          element={
            <RequireScope scope="jobs:read">
              <BatchesPage />
            </RequireScope>
          }
        />
        <Route
          path="batches/:id"
          element={
            <RequireScope scope="jobs:read">
              <BatchDetailPage />
            </RequireScope>
          }
        />
        <Route
          path="playground"
          element={
            <RequireScope scope="jobs:write">
              <PlaygroundPage />
            </RequireScope>
          }
        />
        <Route
          path="models"
          element={
            <RequireScope scope="jobs:read">
              <ModelsPage />
            </RequireScope>
          }
        />
        <Route
          path="models/:name"
          element={
            <RequireScope scope="jobs:read">
              <ModelDetailPage />
            </RequireScope>
          }
        />
        <Route
          path="workers"
          element={
            <RequireScope scope="jobs:read">
              <WorkersPage />
            </RequireScope>
          }
        />
        <Route
          path="usage"
          element={
            <RequireScope scope="jobs:read">
              <UsagePage />
            </RequireScope>
          }
        />
        {/* A worker's session run (not a Batch API batch). Admin only: the page says so itself, next to the id the link carried. */}
        <Route path="inference-batches/:id" element={<InferenceBatchPage />} />
        <Route
          path="keys"
          element={
            <RequireScope scope="admin">
              <ApiKeysPage />
            </RequireScope>
          }
        />
        <Route path="*" element={<NotFoundPage />} />
      </Route>
    </Routes>
  );
}
