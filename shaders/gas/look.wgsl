// gas/look.wgsl: how a gas is drawn, as its passes read it (no pass of its own, no bindings);
// systems/gas/records.py packs GasLook through emberfx.layout.

struct GasLook {
    smoke: vec4f,     // rgb: the smoke colour (linear albedo); w: absorption per density per m
    light: vec4f,     // x: scattering per density per m; y: fire_intensity; z: kelvin per unit
                      // temperature; w: the blackbody table's entries
    steps: vec4f,     // x: the view march's step, m; y: the light march's step, m; z: its
                      // steps; w: 0
    fire_light: vec4f,   // x: the fire's point light's intensity per unit of glow (0: none);
                         // y: its range, m; zw: 0
};
