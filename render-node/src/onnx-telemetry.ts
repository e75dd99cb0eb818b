/**
 * onnxruntime 1.30's Linux build carries Microsoft's usage telemetry (the 1DS SDK), on unless turned off: from a
 * process's first session on it leaves an empty `mat-debug-<pid>.log` and a `.ses` file in the temp folder, keeps a
 * device id and an event database under ~/.cache/Microsoft/DeveloperTools/.onnxruntime, and uploads events to
 * mobile.events.data.microsoft.com. ORT_DISABLE_TELEMETRY=1, read when onnxruntime sets up its environment (at the
 * first session, so setting it here, before any session, is in time), turns all of it off; an operator who sets
 * the variable keeps their choice. Imported by every module that creates a session.
 */
process.env.ORT_DISABLE_TELEMETRY ??= '1';
