"""How a hydration Job reports on itself: the annotations on the Job.

The hydrator writes the figures (it runs in its own image with the standard library only, so
compose_model_cache/hydrator/job_report.py holds the same names, checked equal by a test);
compose-model-cache reads them back from the observed Job and writes PINNED_REVISION, which
the hydrator reads; `modelfleet simulate`'s Job writes them as the hydrator would.
"""

PREFIX = "hydration.modelfleet.io/"
BYTES_DONE = PREFIX + "bytes-done"
BYTES_TOTAL = PREFIX + "bytes-total"
FILES_DONE = PREFIX + "files-done"
FILES_TOTAL = PREFIX + "files-total"
REVISION = PREFIX + "revision"  # the commit the Job resolved the revision to, and fetches
PINNED_REVISION = PREFIX + "pinned-revision"  # the commit the cache pinned (set by the function)
