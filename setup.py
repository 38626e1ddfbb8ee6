"""Package discovery for a layout of several roots mapped into one import namespace.

pyproject.toml holds everything else. `[tool.setuptools.packages.find]` names packages after
their folders, so it cannot map `graphs/` to `wargraph.graphs`; here each root is searched and
its packages are named under the root's import name. Folders of data files (prompts/v1, web,
experiments ...) are found as namespace packages, so their files ship as package data without
setuptools warning that they would be left out."""

from setuptools import find_namespace_packages, setup

ROOTS = {
    "wargraph": "wargraph",
    "wargraph.graphs": "graphs",
    "wargraph.nodes": "nodes",
    "wargraph.evals": "evals",
    "wargraph.prompts": "prompts",
    "wargraph.scenarios": "scenarios",
}
DATA = ["*.txt", "*.yaml", "*.yml", "*.html", "*.js", "*.css"]


def packages() -> tuple[list[str], dict[str, str]]:
    names: list[str] = []
    dirs: dict[str, str] = {}
    for name, folder in ROOTS.items():
        for sub in ["", *find_namespace_packages(folder, exclude=["*__pycache__*"])]:
            full = f"{name}.{sub}" if sub else name
            names.append(full)
            dirs[full] = f"{folder}/{sub.replace('.', '/')}" if sub else folder
    return names, dirs


found, package_dir = packages()
setup(
    packages=found,
    package_dir=package_dir,
    package_data={name: DATA for name in found},
    include_package_data=False,
)
