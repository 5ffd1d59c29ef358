import { Link } from 'react-router';
import { PageHeader } from '../components/ui/page-header.tsx';
import { EmptyState } from '../components/ui/states.tsx';
import { buttonStyles } from '../components/ui/button.tsx';

export function NotFoundPage() {
  return (
    <>
      <PageHeader title="Page not found" />
      <EmptyState
        title="There is no page at this address."
        action={
          <Link to="/" className={buttonStyles()}>
            Back to the start page
          </Link>
        }
      />
    </>
  );
}
