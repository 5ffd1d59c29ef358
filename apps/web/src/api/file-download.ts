import { inferq } from './sdk-client.ts';

/**
 * A Batch API file's bytes (a batch's output or error file, JSONL) read whole into a Blob to save: a browser saves a
 * whole file, and a plain link could not send the API key. A batch's files are as big as its answers; a browser
 * holds that in memory for the moment of the save.
 */
export async function downloadFile(fileId: string): Promise<Blob> {
  const bytes = await new Response(await inferq().files.content(fileId)).arrayBuffer();
  return new Blob([bytes], { type: 'application/jsonl' });
}
