{
  description = "Modelfleet: Crossplane composition functions that stage LLM weights once per cluster";

  inputs = {
    nixpkgs.url = "github:NixOS/nixpkgs/nixos-unstable";
    flake-utils.url = "github:numtide/flake-utils";
  };

  outputs = { self, nixpkgs, flake-utils }:
    flake-utils.lib.eachDefaultSystem (system:
      let
        pkgs = import nixpkgs { inherit system; };
        tools = [ pkgs.python311 pkgs.uv pkgs.ruff pkgs.git ];
      in
      {
        # `nix develop`: Python 3.11, uv and ruff; then the README's commands.
        devShells.default = pkgs.mkShell {
          packages = tools;
          env.UV_PYTHON = "${pkgs.python311}/bin/python3";
        };

        # `nix flake check` runs what CI runs. uv needs the network to fetch wheels,
        # so this check is meant for `nix flake check --option sandbox false`.
        checks.ci = pkgs.runCommand "modelfleet-ci" { nativeBuildInputs = tools; } ''
          cp -r ${self} src && chmod -R u+w src && cd src
          export HOME=$TMPDIR UV_PYTHON=${pkgs.python311}/bin/python3
          bash .ci/run
          touch $out
        '';
      });
}
