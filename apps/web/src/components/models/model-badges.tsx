import { Badge } from '../ui/badge.tsx';

export const ResponseCacheBadge = ({ on }: { on: boolean }) => <Badge tone={on ? 'info' : 'muted'}>response cache {on ? 'on' : 'off'}</Badge>;

/** The model was registered with a tokenizer and serves POST /v1/embeddings. */
export const EmbeddingsBadge = () => <Badge tone="info">embeddings</Badge>;
