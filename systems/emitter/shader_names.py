"""The emitter's simulation shaders by role, named once for the modules that build, specialise
or compare their passes."""

UPDATE = "emitter/update.wgsl"                 # the multi-pass step's update (atomic births too)
UPDATE_RANKED = "emitter/update_ranked.wgsl"   # the one-pass step (may give the births itself)
SPAWN = "emitter/spawn.wgsl"                   # ordered births, host's and events'
BIRTHS = "emitter/births.wgsl"                 # the one-pass step's births
# the passes that give births, and so run the emission shape and `init`
BIRTH_PASSES = (UPDATE, UPDATE_RANKED, SPAWN, BIRTHS)
