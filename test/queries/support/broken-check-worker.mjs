// A check worker that cannot start: it fails while loading, as a missing module would.
throw new Error('cannot load the check worker');
