#!/nonexistent/interpreter
echo no
