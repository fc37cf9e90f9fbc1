"""Load one OpenSpiel game string and measure it, in a throwaway process (see `sandbox`).

Run as a script, importing nothing of stratagem (so it starts in a tenth of a second): argv is the
game string, the address-space limit in bytes, and the bounds on the sizes as JSON. It prints one
JSON object a line: {"error": ...} where OpenSpiel refuses the string; else {"sizes": ...}, then,
where every size is in bounds, {"state": true} once a first state has been made and read.
"""

import json
import resource
import sys


def main() -> None:
    game_string, memory, bounds = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3])
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    import pyspiel

    try:
        game = pyspiel.load_game(game_string)
    except Exception as exc:  # pyspiel's SpielError, or MemoryError (std::bad_alloc)
        _report(exc)
        return
    kind = game.get_type()
    sizes = {
        "actions": game.num_distinct_actions(),
        "length": game.max_game_length(),
        "players": game.num_players(),
        "chance": game.max_chance_outcomes(),
    }
    tensors = {
        "observation": (kind.provides_observation_tensor, game.observation_tensor_size),
        "information": (kind.provides_information_state_tensor, game.information_state_tensor_size),
    }
    for size, (provided, measure) in tensors.items():
        try:
            if provided:
                sizes[size] = measure()
        except Exception:  # said to be provided, yet unimplemented (crossword): no tensor
            pass
    print(json.dumps({"sizes": sizes}), flush=True)
    if any(n > bounds[size] for size, n in sizes.items()):
        return
    try:
        state = game.new_initial_state()
        str(state)
        if state.is_chance_node():
            state.chance_outcomes()
        elif not state.is_terminal():
            state.legal_actions()
    except Exception as exc:
        _report(exc)
        return
    print(json.dumps({"state": True}), flush=True)


def _report(exc: Exception) -> None:
    text = str(exc).strip().splitlines()
    print(json.dumps({"error": text[0] if text else "", "kind": type(exc).__name__}), flush=True)


if __name__ == "__main__":
    main()
