"""Compare controllers: ``python evaluate.py [overrides]`` (configs/evaluate.yaml; workflows/)."""

from workflows.evaluate import main

if __name__ == "__main__":
    main()
