"""The small scene the sweep tests vary (grammar, local pool, Ray): one emitter, 64 x 36."""

SCENE = """
[scene]
name = "tiny"
seed = 3
size = [64, 36]
[camera]
kind = "perspective"
position = [0.0, 1.0, 6.0]
target = [0.0, 1.0, 0.0]
[[entity]]
name = "jet"
[entity.emitter]
capacity = 500
rate = 2000.0
lifetime = [0.5, 1.0]
speed = [2.0, 3.0]
color = ["#ffd27f", "#ff6a00"]
"""
