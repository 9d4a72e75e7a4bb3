"""The hydrator: the program a hydration Job runs to stage a model once into a cache claim.

It ships in its own image (image/ beside this package), which holds this package, the
contracts' hydration module and the launcher the Job's command names
(modelfleet_contracts.hydration.SCRIPT_PATH_IN_IMAGE); `modelfleet-hydrate` runs it elsewhere.
Nothing is imported here: the image has the standard library and its pinned downloaders only.
"""
