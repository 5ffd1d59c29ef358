/** An embedded server started for development or tests. */
export interface RunningService {
  url: string;
  /** Stops the server and resolves once its process has exited. */
  stop(): Promise<void>;
}
