import type { ReactNode } from 'react';
import { Link } from 'react-router';
import type { UseQueryResult } from '@tanstack/react-query';
import { buttonStyles } from '../ui/button.tsx';
import { CopyableId } from '../ui/copy-button.tsx';
import { PageHeader } from '../ui/page-header.tsx';
import { EmptyState, LoadingState, RecordError } from '../ui/states.tsx';

interface DetailPageProps<T extends { id: string }> {
  /** The page's h1, the same in every state. */
  title: string;
  /** The record in the page's words, lower case: "job" gives "Loading job…", "Job not found" and "Copy job id". */
  noun: string;
  /** The id from the URL: what the page says it looked for when the record cannot be shown. */
  id: string;
  /** The list the back link returns to ("/jobs") and what the link says ("Job list"). */
  list: { to: string; label: string };
  record: UseQueryResult<T>;
  /** An error the page explains in its own words (a purged job); `undefined` leaves it to not-found or retry. */
  explainError?: (error: Error) => ReactNode | undefined;
  /** The record itself, below the header. */
  children: (record: T) => ReactNode;
}

/**
 * One record's page: the header with a link back to its list, then the record once read. While it loads, or when it
 * cannot be read, the header stays and the state takes the record's place. An error on a later poll keeps the
 * record shown: the page shows the last state it read rather than lose it.
 */
export function DetailPage<T extends { id: string }>({ title, noun, id, list, record, explainError, children }: DetailPageProps<T>) {
  const Noun = noun.charAt(0).toUpperCase() + noun.slice(1);
  const backLink = (
    <Link to={list.to} className={buttonStyles({ variant: 'ghost', size: 'sm' })}>
      ← {list.label}
    </Link>
  );
  const explained = record.isError ? explainError?.(record.error) : undefined;
  if (record.isPending)
    return (
      <>
        <PageHeader title={title} actions={backLink} />
        <LoadingState label={`Loading ${noun}…`} />
      </>
    );
  if (explained !== undefined)
    return (
      <>
        <PageHeader title={title} description={<span className="font-mono break-all">{id}</span>} actions={backLink} />
        {explained}
      </>
    );
  if (record.data === undefined)
    return (
      <>
        <PageHeader title={title} actions={backLink} />
        <RecordError
          error={record.error}
          onRetry={() => void record.refetch()}
          notFound={
            <EmptyState title={`${Noun} not found`}>
              No {noun} with id {id} is visible to this API key.
            </EmptyState>
          }
        />
      </>
    );
  return (
    <>
      <PageHeader title={title} description={<CopyableId id={record.data.id} label={`Copy ${noun} id`} />} actions={backLink} />
      {children(record.data)}
    </>
  );
}
